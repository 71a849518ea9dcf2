"""decompose_reduction: Before/Expected, numerics, illegal uses."""
import pytest

from rvm.script import ir as I
from rvm.script import tir as T
from rvm.tir.schedule import Schedule, ScheduleError

from tests.tir.schedule.common import (
    Elementwise, Matmul, MatmulRelu, RowSum, check_schedule,
)


def test_decompose_at_the_reduction_loop():
    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
                 C: T.Buffer((128, 128), "float32")):
            T.func_attr({"global_symbol": "main", "tir.noalias": True})
            for i, j_0 in T.grid(128, 32):
                for j_1_init in range(4):
                    with T.block("C_init"):
                        vi = T.axis.spatial(128, i)
                        vj = T.axis.spatial(128, j_0 * 4 + j_1_init)
                        T.reads()
                        T.writes(C[vi, vj])
                        C[vi, vj] = T.float32(0)
                for k, j_1 in T.grid(128, 4):
                    with T.block("C_update"):
                        vi = T.axis.spatial(128, i)
                        vj = T.axis.spatial(128, j_0 * 4 + j_1)
                        vk = T.axis.reduce(128, k)
                        T.reads(C[vi, vj], A[vi, vk], B[vk, vj])
                        T.writes(C[vi, vj])
                        C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    sch = Schedule(Matmul, debug_mask="all")
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(i, j0, k, j1)
    init = sch.decompose_reduction(block, k)
    assert sch.get(init).name_hint == "C_init"
    assert sch.get(block).name_hint == "C_update"  # the handle follows the renamed block
    check_schedule(sch, Matmul, Expected)


def test_decompose_at_the_outermost_loop():
    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((8, 64), "float32"), B: T.Buffer((8,), "float32")):
            for i_init in range(8):
                with T.block("B_init"):
                    vi = T.axis.spatial(8, i_init)
                    T.reads()
                    T.writes(B[vi])
                    B[vi] = T.float32(0)
            for i, k in T.grid(8, 64):
                with T.block("B_update"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    T.reads(B[vi], A[vi, vk])
                    T.writes(B[vi])
                    B[vi] = B[vi] + A[vi, vk]

    sch = Schedule(RowSum, debug_mask="all")
    block = sch.get_block("B")
    i, _ = sch.get_loops(block)
    sch.decompose_reduction(block, i)
    check_schedule(sch, RowSum, Expected)


def test_decompose_rejects_a_block_without_init():
    sch = Schedule(Elementwise)
    block = sch.get_block("B")
    i, _ = sch.get_loops(block)
    with pytest.raises(ScheduleError, match="no init"):
        sch.decompose_reduction(block, i)


def test_decompose_rejects_a_loop_under_a_reduction_loop():
    sch = Schedule(Matmul)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    sch.reorder(k, i, j)
    with pytest.raises(ScheduleError, match="above every loop bound to a reduction axis"):
        sch.decompose_reduction(block, j)


def test_decompose_rejects_a_loop_not_around_the_block():
    sch = Schedule(MatmulRelu)
    other = sch.get_loops(sch.get_block("D"))[0]
    with pytest.raises(ScheduleError, match="must enclose the block"):
        sch.decompose_reduction(sch.get_block("C"), other)
