"""compute_inline and reverse_compute_inline: Before/Expected, numerics, illegal uses."""
import pytest

from rvm.script import ir as I
from rvm.script import tir as T
from rvm.tir.schedule import Schedule, ScheduleError

from tests.tir.schedule.common import Elementwise, MatmulRelu, check_schedule


def test_compute_inline():
    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((16, 24), "float32"), C: T.Buffer((16, 24), "float32")):
            for i, j in T.grid(16, 24):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)

    sch = Schedule(Elementwise, debug_mask="all")
    c = sch.get_block("C")
    sch.compute_inline(sch.get_block("B"))
    assert sch.get(c).name_hint == "C"
    check_schedule(sch, Elementwise, Expected)


def test_reverse_compute_inline():
    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((16, 24), "float32"), C: T.Buffer((16, 24), "float32")):
            for i, j in T.grid(16, 24):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)

    sch = Schedule(Elementwise, debug_mask="all")
    sch.reverse_compute_inline(sch.get_block("C"))
    check_schedule(sch, Elementwise, Expected)


@I.ir_module
class Transposed:
    @T.prim_func
    def main(A: T.Buffer((8, 16), "float32"), C: T.Buffer((16, 8), "float32")):
        B = T.alloc_buffer((8, 16))
        for i, j in T.grid(8, 16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + T.float32(1)
        for j, i in T.grid(16, 8):
            with T.block("C"):
                vj, vi = T.axis.remap("SS", [j, i])
                C[vj, vi] = B[vi, vj] * T.float32(3)


def test_inlining_with_permuted_indices():
    for inline in ("compute_inline", "reverse_compute_inline"):
        sch = Schedule(Transposed, debug_mask="all")
        block = sch.get_block("B" if inline == "compute_inline" else "C")
        getattr(sch, inline)(block)
        check_schedule(sch, Transposed)


def test_compute_inline_rejects_a_reduction_block():
    sch = Schedule(MatmulRelu)
    with pytest.raises(ScheduleError, match="complete block"):
        sch.compute_inline(sch.get_block("C"))


def test_compute_inline_rejects_a_block_writing_an_output():
    sch = Schedule(Elementwise)
    with pytest.raises(ScheduleError, match="writes a function parameter"):
        sch.compute_inline(sch.get_block("C"))


@I.ir_module
class Shifted:
    @T.prim_func
    def main(A: T.Buffer((8,), "float32"), C: T.Buffer((7,), "float32")):
        B = T.alloc_buffer((8,))
        for i in range(7):
            with T.block("B"):
                vi = T.axis.spatial(7, i)
                B[vi + 1] = A[vi] + T.float32(1)
        for i in range(7):
            with T.block("C"):
                vi = T.axis.spatial(7, i)
                C[vi] = B[vi + 1] * T.float32(2)


def test_compute_inline_rejects_a_store_not_at_its_axes():
    sch = Schedule(Shifted)
    with pytest.raises(ScheduleError, match="distinct block axes"):
        sch.compute_inline(sch.get_block("B"))


def test_reverse_compute_inline_rejects_a_reduction_producer():
    sch = Schedule(MatmulRelu)
    with pytest.raises(ScheduleError, match="producer must be a complete block"):
        sch.reverse_compute_inline(sch.get_block("D"))


def test_reverse_compute_inline_rejects_reads_not_at_its_axes():
    sch = Schedule(Shifted)
    with pytest.raises(ScheduleError, match="exactly its axes"):
        sch.reverse_compute_inline(sch.get_block("C"))
