"""rfactor: Before/Expected, numerics, illegal uses."""
import pytest

from rvm.script import ir as I
from rvm.script import tir as T
from rvm.tir.schedule import Schedule, ScheduleError

from tests.tir.schedule.common import Elementwise, Matmul, RowSum, check_schedule


def test_rfactor_inner_reduction_loop():
    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((8, 64), "float32"), B: T.Buffer((8,), "float32")):
            B_rf = T.alloc_buffer((8, 8))
            for i, k_0, k_1 in T.grid(8, 8, 8):
                with T.block("B_rf"):
                    vi, vk_1, vk_0 = T.axis.remap("SSR", [i, k_1, k_0])
                    with T.init():
                        B_rf[vk_1, vi] = T.float32(0)
                    B_rf[vk_1, vi] = B_rf[vk_1, vi] + A[vi, vk_0 * 8 + vk_1]
            for i, k_1 in T.grid(8, 8):
                with T.block("B"):
                    vi, vk_1 = T.axis.remap("SR", [i, k_1])
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + B_rf[vk_1, vi]

    sch = Schedule(RowSum, debug_mask="all")
    block = sch.get_block("B")
    _, k = sch.get_loops(block)
    _, k1 = sch.split(k, [None, 8])
    rf = sch.rfactor(k1, 0)
    assert sch.get(rf).name_hint == "B_rf" and sch.get(block).name_hint == "B"
    check_schedule(sch, RowSum, Expected)


def test_rfactor_then_vectorize_the_partial_sums():
    sch = Schedule(RowSum, debug_mask="all")
    _, k = sch.get_loops(sch.get_block("B"))
    k0, k1 = sch.split(k, [None, 16])
    rf = sch.rfactor(k1, 1)
    i, rk0, rk1 = sch.get_loops(rf)
    sch.reorder(i, rk1, rk0)
    sch.reorder(i, rk0, rk1)
    sch.vectorize(rk1)
    check_schedule(sch, RowSum)


def test_rfactor_rejects_a_spatial_loop():
    sch = Schedule(RowSum)
    i, _ = sch.get_loops(sch.get_block("B"))
    with pytest.raises(ScheduleError, match="bound to reduction axes only"):
        sch.rfactor(i, 0)


def test_rfactor_rejects_a_block_that_is_not_a_reduction():
    sch = Schedule(Elementwise)
    _, j = sch.get_loops(sch.get_block("B"))
    with pytest.raises(ScheduleError, match="reduction block"):
        sch.rfactor(j, 0)


def test_rfactor_rejects_an_init_that_is_not_the_identity():
    @I.ir_module
    class SumPlusOne:
        @T.prim_func
        def main(A: T.Buffer((8, 64), "float32"), B: T.Buffer((8,), "float32")):
            for i, k in T.grid(8, 64):
                with T.block("B"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        B[vi] = T.float32(1)
                    B[vi] = B[vi] + A[vi, vk]

    sch = Schedule(SumPlusOne)
    _, k = sch.get_loops(sch.get_block("B"))
    with pytest.raises(ScheduleError, match="identity of the combiner"):
        sch.rfactor(k, 0)


def test_rfactor_rejects_a_bad_factor_axis():
    sch = Schedule(Matmul)
    _, _, k = sch.get_loops(sch.get_block("C"))
    with pytest.raises(ScheduleError, match="factor_axis must be in"):
        sch.rfactor(k, 5)
