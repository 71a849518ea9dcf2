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


# compute_inline rewrites only the blocks that load the inlined buffer (it leaves the others
# as they are, unvisited): the blocks found by their loads, wherever they are, never by their
# declared reads.
@I.ir_module
class NestedConsumer:
    @T.prim_func
    def main(A: T.Buffer((8, 16), "float32"), C: T.Buffer((8, 16), "float32"),
             D: T.Buffer((8, 16), "float32")):
        B = T.alloc_buffer((8, 16))
        for i, j in T.grid(8, 16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + T.float32(1)
        with T.block("outer"):
            # reads as they are once B is inlined (an outer block's declared reads are kept)
            T.reads(A[0:8, 0:16])
            T.writes(C[0:8, 0:16])
            for i, j in T.grid(8, 16):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = B[vi, vj] * T.float32(2)
        for i, j in T.grid(8, 16):
            with T.block("D"):
                vi, vj = T.axis.remap("SS", [i, j])
                D[vi, vj] = A[vi, vj] - T.float32(3)


def test_inlining_reaches_a_consumer_nested_in_another_block_and_keeps_the_others():
    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((8, 16), "float32"), C: T.Buffer((8, 16), "float32"),
                 D: T.Buffer((8, 16), "float32")):
            with T.block("outer"):
                T.reads(A[0:8, 0:16])
                T.writes(C[0:8, 0:16])
                for i, j in T.grid(8, 16):
                    with T.block("C"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        C[vi, vj] = (A[vi, vj] + T.float32(1)) * T.float32(2)
            for i, j in T.grid(8, 16):
                with T.block("D"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    D[vi, vj] = A[vi, vj] - T.float32(3)

    sch = Schedule(NestedConsumer, debug_mask="all")
    d = sch.get_block("D")
    untouched = sch.get(d)
    sch.compute_inline(sch.get_block("B"))
    assert sch.get(d) is untouched  # a block not reading B is kept, the very same node
    check_schedule(sch, NestedConsumer, Expected)


def test_inlining_rewrites_a_consumer_whose_declared_reads_omit_the_buffer():
    @I.ir_module
    class Stale:
        @T.prim_func
        def main(A: T.Buffer((8, 16), "float32"), C: T.Buffer((8, 16), "float32")):
            B = T.alloc_buffer((8, 16))
            for i, j in T.grid(8, 16):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] + T.float32(1)
            for i, j in T.grid(8, 16):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = B[vi, vj] * A[vi, vj]

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((8, 16), "float32"), C: T.Buffer((8, 16), "float32")):
            for i, j in T.grid(8, 16):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = (A[vi, vj] + T.float32(1)) * A[vi, vj]

    assert "B" not in [r.buffer.name for r in Stale["main"].body.block.body[1].body.body
                       .block.reads]
    sch = Schedule(Stale, debug_mask="all")
    sch.compute_inline(sch.get_block("B"))
    check_schedule(sch, Stale, Expected)


def test_inlining_an_index_buffer_rewrites_the_loads_it_indexes():
    @I.ir_module
    class Gather:
        @T.prim_func
        def main(A: T.Buffer((16,), "float32"), idx: T.Buffer((8,), "int32"),
                 C: T.Buffer((8,), "float32")):
            B = T.alloc_buffer((8,), "int32")
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    B[vi] = idx[vi] + 1
            for i in range(8):
                with T.block("C"):
                    vi = T.axis.spatial(8, i)
                    C[vi] = A[B[vi]]

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((16,), "float32"), idx: T.Buffer((8,), "int32"),
                 C: T.Buffer((8,), "float32")):
            for i in range(8):
                with T.block("C"):
                    vi = T.axis.spatial(8, i)
                    C[vi] = A[idx[vi] + 1]

    sch = Schedule(Gather, debug_mask="all")
    sch.compute_inline(sch.get_block("B"))
    check_schedule(sch, Gather, Expected, numeric=False)
