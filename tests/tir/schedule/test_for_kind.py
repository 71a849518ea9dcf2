"""parallel, vectorize, unroll: Before/Expected, numerics, illegal uses."""
import pytest

from rvm.script import ir as I
from rvm.script import tir as T
from rvm.tir.schedule import Schedule, ScheduleError
from rvm.tir.schedule.primitive.for_kind import MAX_UNROLL_STEPS

from tests.tir.schedule.common import Elementwise, Matmul, RowSum, check_schedule


@I.ir_module
class Symbolic:
    @T.prim_func
    def main(a: T.handle, b: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (4, n))
        B = T.match_buffer(b, (4, n))
        for i, j in T.grid(T.int64(4), n):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + T.float32(1)


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


def test_unroll_a_reduction_loop_but_needs_a_loop():
    sch = Schedule(RowSum)
    _, k = sch.get_loops(sch.get_block("B"))
    sch.unroll(k)
    with pytest.raises(TypeError, match="LoopRV"):
        sch.unroll(sch.get_block("B"))


def test_unroll_and_vectorize_of_split_loops_within_the_limits():
    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((8, 64), "float32"), B: T.Buffer((8,), "float32")):
            for i in T.parallel(8):
                for k_0 in T.unroll(4):
                    for k_1 in T.unroll(16):
                        with T.block("B"):
                            vi = T.axis.spatial(8, i)
                            vk = T.axis.reduce(64, k_0 * 16 + k_1)
                            with T.init():
                                B[vi] = T.float32(0)
                            B[vi] = B[vi] + A[vi, vk]

    sch = Schedule(RowSum, debug_mask="all")
    i, k = sch.get_loops(sch.get_block("B"))
    k0, k1 = sch.split(k, [4, 16])
    sch.unroll(k1)
    sch.unroll(k0)  # 4 x 16 copies
    sch.unroll(k0)  # the loop's own kind again: nothing changes
    sch.parallel(i)
    check_schedule(sch, RowSum, Expected)


def test_a_loop_has_one_kind():
    sch = Schedule(Elementwise)
    i, j = sch.get_loops(sch.get_block("B"))
    sch.parallel(i)
    sch.vectorize(j)
    with pytest.raises(ScheduleError, match="unroll on loop i: a loop has one kind: it is "
                                            "already parallel .asked to make it unrolled"):
        sch.unroll(i)
    with pytest.raises(ScheduleError, match="a loop has one kind: it is already vectorized"):
        sch.unroll(j)
    with pytest.raises(ScheduleError, match="vectorize on loop i: a loop has one kind: it is "
                                            "already parallel"):
        sch.vectorize(i)
    k, _ = sch.get_loops(sch.get_block("C"))
    sch.unroll(k)
    with pytest.raises(ScheduleError, match="a loop has one kind: it is already unrolled"):
        sch.vectorize(k)
    with pytest.raises(ScheduleError, match="a loop has one kind: it is already unrolled"):
        sch.parallel(k)


def test_vectorize_and_unroll_need_a_constant_extent():
    sch = Schedule(Symbolic)
    _, j = sch.get_loops(sch.get_block("B"))
    with pytest.raises(ScheduleError, match="vectorize on loop j: the loop's extent must be a "
                                            "constant: a vectorized loop runs a fixed number"):
        sch.vectorize(j)
    with pytest.raises(ScheduleError, match="unroll on loop j: the loop's extent must be a "
                                            "constant: an unrolled loop is copied .*extent n"):
        sch.unroll(j)
    sch.parallel(j)  # a parallel loop may have any extent


def test_vectorize_rejects_nested_lanes():
    sch = Schedule(Elementwise)
    _, j = sch.get_loops(sch.get_block("B"))
    j0, j1 = sch.split(j, [3, 8])
    sch.vectorize(j1)
    with pytest.raises(ScheduleError, match="vectorize on loop j_0: a vectorized loop has no "
                                            "vectorized loop under it: SIMD lanes are one "
                                            "dimension .vectorized loop j_1"):
        sch.vectorize(j0)
    sch2 = Schedule(Elementwise)
    _, j = sch2.get_loops(sch2.get_block("B"))
    j0, j1 = sch2.split(j, [3, 8])
    sch2.vectorize(j0)
    with pytest.raises(ScheduleError, match="vectorize on loop j_1: the loop is nested in "
                                            "another vectorized loop"):
        sch2.vectorize(j1)


def test_no_parallel_loop_inside_simd_lanes():
    sch = Schedule(Elementwise)
    i, j = sch.get_loops(sch.get_block("B"))
    sch.parallel(j)
    with pytest.raises(ScheduleError, match="vectorize on loop i: a vectorized loop has no "
                                            "parallel loop under it: OpenMP"):
        sch.vectorize(i)
    sch2 = Schedule(Elementwise)
    i, j = sch2.get_loops(sch2.get_block("B"))
    sch2.vectorize(i)
    with pytest.raises(ScheduleError, match="parallel on loop j: the loop is nested in a "
                                            "vectorized loop: OpenMP"):
        sch2.parallel(j)


def test_unroll_bounds_the_copies_of_nested_unrolled_loops():
    sch = Schedule(Matmul)
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.unroll(k)  # 128 copies
    with pytest.raises(ScheduleError, match=f"unroll on loop j: the unrolled loops around a "
                                            f"statement may copy it at most {MAX_UNROLL_STEPS} "
                                            f"times .16384 copies"):
        sch.unroll(j)
    # Unrolled loops above count as well as those below.
    sch2 = Schedule(Matmul)
    i, j, k = sch2.get_loops(sch2.get_block("C"))
    k0, k1 = sch2.split(k, [2, 64])
    sch2.unroll(i)
    with pytest.raises(ScheduleError, match="at most 4096 times .8192 copies"):
        sch2.unroll(k1)
    sch2.unroll(k0)  # 128 x 2
