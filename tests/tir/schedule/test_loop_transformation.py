"""split, fuse, reorder, add_unit_loop: Before/Expected, numerics, illegal uses."""
import pytest

from rvm.script import ir as I
from rvm.script import tir as T
from rvm.tir.schedule import Schedule, ScheduleError

from tests.tir.schedule.common import Elementwise, Matmul, RowSum, check_schedule


def test_split_with_inferred_factor():
    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((16, 24), "float32"), C: T.Buffer((16, 24), "float32")):
            B = T.alloc_buffer((16, 24))
            for i, j_0, j_1 in T.grid(16, 6, 4):
                with T.block("B"):
                    vi = T.axis.spatial(16, i)
                    vj = T.axis.spatial(24, j_0 * 4 + j_1)
                    B[vi, vj] = A[vi, vj] * T.float32(2)
            for i, j in T.grid(16, 24):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = B[vi, vj] + T.float32(1)

    sch = Schedule(Elementwise, debug_mask="all")
    _, j = sch.get_loops(sch.get_block("B"))
    outer, inner = sch.split(j, factors=[None, 4])
    assert sch.get(outer).extent.value == 6 and sch.get(inner).extent.value == 4
    check_schedule(sch, Elementwise, Expected)


def test_split_non_divisible_adds_predicate():
    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((16, 24), "float32"), C: T.Buffer((16, 24), "float32")):
            B = T.alloc_buffer((16, 24))
            for i, j_0, j_1 in T.grid(16, 5, 5):
                with T.block("B"):
                    vi = T.axis.spatial(16, i)
                    vj = T.axis.spatial(24, j_0 * 5 + j_1)
                    T.where(j_0 * 5 + j_1 < 24)
                    B[vi, vj] = A[vi, vj] * T.float32(2)
            for i, j in T.grid(16, 24):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = B[vi, vj] + T.float32(1)

    sch = Schedule(Elementwise, debug_mask="all")
    _, j = sch.get_loops(sch.get_block("B"))
    sch.split(j, factors=[None, 5])
    check_schedule(sch, Elementwise, Expected)


def test_split_three_ways_then_fuse_back():
    sch = Schedule(Matmul, debug_mask="all")
    i, j, k = sch.get_loops(sch.get_block("C"))
    a, b, c = sch.split(k, factors=[4, 8, 4])
    fused = sch.fuse(a, b, c)
    assert sch.get(fused).extent.value == 128
    check_schedule(sch, Matmul)


def test_fuse():
    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((16, 24), "float32"), C: T.Buffer((16, 24), "float32")):
            B = T.alloc_buffer((16, 24))
            for i_j_fused in range(384):
                with T.block("B"):
                    vi = T.axis.spatial(16, i_j_fused // 24)
                    vj = T.axis.spatial(24, i_j_fused % 24)
                    B[vi, vj] = A[vi, vj] * T.float32(2)
            for i, j in T.grid(16, 24):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = B[vi, vj] + T.float32(1)

    sch = Schedule(Elementwise, debug_mask="all")
    i, j = sch.get_loops(sch.get_block("B"))
    sch.fuse(i, j)
    check_schedule(sch, Elementwise, Expected)


def test_reorder():
    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
                 C: T.Buffer((128, 128), "float32")):
            T.func_attr({"global_symbol": "main", "tir.noalias": True})
            for k, j, i in T.grid(128, 128, 128):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    with T.init():
                        C[vi, vj] = T.float32(0)
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    sch = Schedule(Matmul, debug_mask="all")
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.reorder(k, j, i)
    check_schedule(sch, Matmul, Expected)


def test_reorder_keeps_unlisted_loops_in_place():
    sch = Schedule(Matmul, debug_mask="all")
    i, j, k = sch.get_loops(sch.get_block("C"))
    j0, j1 = sch.split(j, [None, 4])
    sch.reorder(k, j1)
    names = [sch.get(lp).loop_var.name for lp in sch.get_loops(sch.get_block("C"))]
    assert names == ["i", "j_0", "k", "j_1"]
    check_schedule(sch, Matmul)


def test_add_unit_loop():
    sch = Schedule(RowSum, debug_mask="all")
    block = sch.get_block("B")
    loop = sch.add_unit_loop(block)
    assert sch.get(loop).extent.value == 1
    assert [sch.get(lp).extent.value for lp in sch.get_loops(block)] == [8, 64, 1]
    check_schedule(sch, RowSum)


# -- illegal uses --------------------------------------------------------------------------
def test_split_rejects_two_inferred_factors():
    sch = Schedule(Matmul)
    _, j, _ = sch.get_loops(sch.get_block("C"))
    with pytest.raises(ScheduleError, match="at most one factor may be None"):
        sch.split(j, [None, None])


def test_split_rejects_factors_not_covering_the_extent():
    sch = Schedule(Matmul)
    _, j, _ = sch.get_loops(sch.get_block("C"))
    with pytest.raises(ScheduleError, match="product must cover the loop extent"):
        sch.split(j, [4, 8])


def test_split_rejects_non_positive_factor():
    sch = Schedule(Matmul)
    _, j, _ = sch.get_loops(sch.get_block("C"))
    with pytest.raises(ScheduleError, match="factors must be positive"):
        sch.split(j, [0, None])


def test_fuse_rejects_loops_not_directly_nested():
    sch = Schedule(Matmul)
    i, _, k = sch.get_loops(sch.get_block("C"))
    with pytest.raises(ScheduleError, match="directly nested"):
        sch.fuse(i, k)


def test_fuse_rejects_loops_of_different_nests():
    sch = Schedule(Elementwise)
    i, _ = sch.get_loops(sch.get_block("B"))
    _, j = sch.get_loops(sch.get_block("C"))
    with pytest.raises(ScheduleError, match="directly nested"):
        sch.fuse(i, j)


def test_reorder_rejects_loops_of_different_nests():
    sch = Schedule(Elementwise)
    i, _ = sch.get_loops(sch.get_block("B"))
    _, j = sch.get_loops(sch.get_block("C"))
    with pytest.raises(ScheduleError, match="nested in one another"):
        sch.reorder(j, i)


def test_reorder_rejects_a_repeated_loop():
    sch = Schedule(Matmul)
    i, j, _ = sch.get_loops(sch.get_block("C"))
    with pytest.raises(ScheduleError, match="given twice"):
        sch.reorder(i, j, i)


@I.ir_module
class Scan:
    @T.prim_func
    def main(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8, 16), "float32")):
        for i, j in T.grid(8, 16):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                vj = T.axis.scan(16, j)
                B[vi, vj] = A[vi, vj]


@I.ir_module
class PrefixSum:
    @T.prim_func
    def main(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8, 16), "float32")):
        for i, j in T.grid(8, 15):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj + 1] = B[vi, vj] + A[vi, vj]


def test_reorder_rejects_loops_bound_to_a_scan_axis():
    sch = Schedule(Scan)
    i, j = sch.get_loops(sch.get_block("B"))
    with pytest.raises(ScheduleError, match="ordered \\(scan\\) or opaque"):
        sch.reorder(j, i)


def test_reorder_rejects_a_loop_carried_dependence():
    sch = Schedule(PrefixSum)
    i, j = sch.get_loops(sch.get_block("B"))
    with pytest.raises(ScheduleError, match="reads a buffer it writes"):
        sch.reorder(j, i)


def test_reorder_keeps_parallel_loops_out_of_simd_lanes():
    sch = Schedule(Matmul)
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.parallel(i)
    sch.vectorize(j)
    with pytest.raises(ScheduleError, match="reorder on loop i: a parallel loop may not move "
                                            "inside a vectorized loop: OpenMP .* .inside "
                                            "vectorized loop j"):
        sch.reorder(j, i)
    sch.reorder(i, k, j)  # the lanes innermost, the parallel loop outermost: legal
    check_schedule(sch, Matmul)


def test_reorder_rejects_loops_with_a_statement_between():
    sch = Schedule(Matmul)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    sch.decompose_reduction(block, k)
    with pytest.raises(ScheduleError, match="perfectly nested"):
        sch.reorder(k, i)


def test_a_removed_loop_handle_is_rejected():
    sch = Schedule(Matmul)
    _, j, _ = sch.get_loops(sch.get_block("C"))
    sch.split(j, [None, 4])
    with pytest.raises(ScheduleError, match="no longer exists"):
        sch.split(j, [None, 2])


def test_fuse_with_a_loop_of_no_iterations_gives_an_empty_loop():
    # a zero-size tensor (3, 0, 5): dividing the fused index by the zero extent is not
    # defined, and the body never runs, so each index is bound to its loop's start
    @I.ir_module
    class Empty:
        @T.prim_func
        def main(A: T.Buffer((3, 0, 5), "float32"), B: T.Buffer((3, 0, 5), "float32")):
            for i, j, k in T.grid(3, 0, 5):
                with T.block("B"):
                    vi, vj, vk = T.axis.remap("SSS", [i, j, k])
                    B[vi, vj, vk] = A[vi, vj, vk] + T.float32(1)

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((3, 0, 5), "float32"), B: T.Buffer((3, 0, 5), "float32")):
            for i_j_k_fused in range(0):
                with T.block("B"):
                    vi = T.axis.spatial(3, 0)
                    vj = T.axis.spatial(0, 0)
                    vk = T.axis.spatial(5, 0)
                    B[vi, vj, vk] = A[vi, vj, vk] + T.float32(1)

    sch = Schedule(Empty, debug_mask="all")
    fused = sch.fuse(*sch.get_loops(sch.get_block("B")))
    assert sch.get(fused).extent.value == 0
    check_schedule(sch, Empty, Expected, numeric=False)
