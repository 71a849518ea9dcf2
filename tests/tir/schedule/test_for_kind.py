"""parallel, vectorize, unroll: Before/Expected, numerics, illegal uses."""
import pytest

from rvm.script import ir as I
from rvm.script import tir as T
from rvm.tir.schedule import Schedule, ScheduleError

from tests.tir.schedule.common import Elementwise, Matmul, RowSum, check_schedule


def test_parallel_vectorize_unroll():
    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((16, 24), "float32"), C: T.Buffer((16, 24), "float32")):
            B = T.alloc_buffer((16, 24))
            for i in T.parallel(16):
                for j in T.vectorized(24):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        B[vi, vj] = A[vi, vj] * T.float32(2)
            for i in T.unroll(16):
                for j in range(24):
                    with T.block("C"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        C[vi, vj] = B[vi, vj] + T.float32(1)

    sch = Schedule(Elementwise, debug_mask="all")
    i, j = sch.get_loops(sch.get_block("B"))
    sch.parallel(i)
    sch.vectorize(j)
    sch.unroll(sch.get_loops(sch.get_block("C"))[0])
    check_schedule(sch, Elementwise, Expected)


def test_parallel_spatial_loop_of_a_reduction():
    sch = Schedule(Matmul, debug_mask="all")
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.parallel(i)
    sch.vectorize(j)
    sch.unroll(k)
    check_schedule(sch, Matmul)


def test_vectorize_rejects_a_reduction_loop():
    sch = Schedule(RowSum)
    _, k = sch.get_loops(sch.get_block("B"))
    with pytest.raises(ScheduleError, match="bound to a reduction axis"):
        sch.vectorize(k)


def test_parallel_rejects_a_reduction_loop():
    sch = Schedule(Matmul)
    _, _, k = sch.get_loops(sch.get_block("C"))
    with pytest.raises(ScheduleError, match="iterations are not independent"):
        sch.parallel(k)


def test_parallel_rejects_a_loop_fused_with_a_reduction_loop():
    sch = Schedule(RowSum)
    i, k = sch.get_loops(sch.get_block("B"))
    fused = sch.fuse(i, k)
    with pytest.raises(ScheduleError, match="reduction axis"):
        sch.parallel(fused)


def test_unroll_is_always_legal_but_needs_a_loop():
    sch = Schedule(RowSum)
    _, k = sch.get_loops(sch.get_block("B"))
    sch.unroll(k)
    with pytest.raises(TypeError, match="LoopRV"):
        sch.unroll(sch.get_block("B"))
