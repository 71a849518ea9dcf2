"""compute_at, reverse_compute_at, sample_compute_location: Before/Expected, numerics,
illegal uses."""
import pytest

from rvm.script import ir as I
from rvm.script import tir as T
from rvm.tir.schedule import Schedule, ScheduleError

from tests.tir.schedule.common import (
    Elementwise, Matmul, MatmulRelu, RowSum, check_numeric, check_schedule,
)


def test_compute_at_a_consumer_loop():
    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((16, 24), "float32"), C: T.Buffer((16, 24), "float32")):
            B = T.alloc_buffer((16, 24))
            for i in range(16):
                for ax0 in range(24):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, ax0])
                        B[vi, vj] = A[vi, vj] * T.float32(2)
                for j in range(24):
                    with T.block("C"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        C[vi, vj] = B[vi, vj] + T.float32(1)

    sch = Schedule(Elementwise, debug_mask="all")
    i, _ = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("B"), i)
    check_schedule(sch, Elementwise, Expected)


def test_compute_at_a_split_loop_guards_the_tail():
    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((16, 24), "float32"), C: T.Buffer((16, 24), "float32")):
            B = T.alloc_buffer((16, 24))
            for i, j_0 in T.grid(16, 5):
                for ax0 in range(5):
                    with T.block("B"):
                        vi = T.axis.spatial(16, i)
                        vj = T.axis.spatial(24, j_0 * 5 + ax0)
                        T.where(j_0 * 5 + ax0 < 24)
                        B[vi, vj] = A[vi, vj] * T.float32(2)
                for j_1 in range(5):
                    with T.block("C"):
                        vi = T.axis.spatial(16, i)
                        vj = T.axis.spatial(24, j_0 * 5 + j_1)
                        T.where(j_0 * 5 + j_1 < 24)
                        C[vi, vj] = B[vi, vj] + T.float32(1)

    sch = Schedule(Elementwise, debug_mask="all")
    _, j = sch.get_loops(sch.get_block("C"))
    j0, _ = sch.split(j, [None, 5])
    sch.compute_at(sch.get_block("B"), j0)
    check_schedule(sch, Elementwise, Expected)


def test_compute_at_a_reduction_block_keeps_its_reduction_loop():
    sch = Schedule(MatmulRelu, debug_mask="all")
    i, j = sch.get_loops(sch.get_block("D"))
    sch.compute_at(sch.get_block("C"), j, preserve_unit_loops=True)
    loops = sch.get_loops(sch.get_block("C"))
    assert [sch.get(lp).extent.value for lp in loops] == [32, 32, 1, 1, 32]
    check_schedule(sch, MatmulRelu)


def test_reverse_compute_at_a_tile_loop():
    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"),
                 D: T.Buffer((32, 32), "float32")):
            T.func_attr({"tir.noalias": True})
            C = T.alloc_buffer((32, 32))
            for i_0, j_0 in T.grid(4, 2):
                for k, i_1, j_1 in T.grid(32, 8, 16):
                    with T.block("C"):
                        vi = T.axis.spatial(32, i_0 * 8 + i_1)
                        vj = T.axis.spatial(32, j_0 * 16 + j_1)
                        vk = T.axis.reduce(32, k)
                        with T.init():
                            C[vi, vj] = T.float32(0)
                        C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
                for ax0, ax1 in T.grid(8, 16):
                    with T.block("D"):
                        vi = T.axis.spatial(32, i_0 * 8 + ax0)
                        vj = T.axis.spatial(32, j_0 * 16 + ax1)
                        D[vi, vj] = T.max(C[vi, vj], T.float32(0))

    sch = Schedule(MatmulRelu, debug_mask="all")
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, [4, 8])
    j0, j1 = sch.split(j, [2, 16])
    sch.reorder(i0, j0, k, i1, j1)
    sch.reverse_compute_at(sch.get_block("D"), j0)
    check_schedule(sch, MatmulRelu, Expected)


def test_sample_compute_location():
    for seed in range(6):
        sch = Schedule(Elementwise, seed=seed, debug_mask="all")
        block = sch.get_block("B")
        loc = sch.sample_compute_location(block)
        sch.compute_at(block, loc)
        check_schedule(sch, Elementwise)
    sch = Schedule(Elementwise)
    block = sch.get_block("B")
    loc = sch.sample_compute_location(block, decision=1)
    sch.compute_at(block, loc)
    assert len(sch.get_loops(block)) == 2
    assert sch.get_loops(block)[0] is not None
    inline = Schedule(Elementwise)
    loc = inline.sample_compute_location(inline.get_block("B"), decision=-2)
    inline.compute_at(inline.get_block("B"), loc)
    check_numeric(Elementwise, inline.mod)
    assert "B" not in [b.name_hint for b in _blocks(inline)]


def _blocks(sch):
    return [s.stmt for s in sch.state.srefs_of("main") if s.is_block]


def test_sample_compute_location_rejects_an_illegal_decision():
    sch = Schedule(Elementwise)
    with pytest.raises(ScheduleError, match="must name a legal location"):
        sch.sample_compute_location(sch.get_block("B"), decision=7)


# -- illegal uses --------------------------------------------------------------------------
@I.ir_module
class TwoConsumers:
    @T.prim_func
    def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32"),
             D: T.Buffer((8,), "float32")):
        B = T.alloc_buffer((8,))
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] + T.float32(1)
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                C[vi] = B[vi]
        for i in range(8):
            with T.block("D"):
                vi = T.axis.spatial(8, i)
                D[vi] = B[vi] * T.float32(2)


def test_compute_at_rejects_a_loop_not_enclosing_every_consumer():
    sch = Schedule(TwoConsumers)
    c_loop = sch.get_loops(sch.get_block("C"))[0]
    with pytest.raises(ScheduleError, match="every consumer of the block must be under the loop"):
        sch.compute_at(sch.get_block("B"), c_loop)


def test_compute_at_rejects_a_block_without_consumers():
    sch = Schedule(Elementwise)
    i, _ = sch.get_loops(sch.get_block("B"))
    with pytest.raises(ScheduleError, match="has no consumer"):
        sch.compute_at(sch.get_block("C"), i)


def test_compute_at_rejects_a_block_reading_and_writing_one_buffer():
    @I.ir_module
    class InPlace:
        @T.prim_func
        def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
            B = T.alloc_buffer((8,))
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    B[vi] = B[vi] + A[vi]
            for i in range(8):
                with T.block("C"):
                    vi = T.axis.spatial(8, i)
                    C[vi] = B[vi]

    sch = Schedule(InPlace)
    with pytest.raises(ScheduleError, match="complete block"):
        sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0])


@I.ir_module
class TwoProducers:
    @T.prim_func
    def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
        B1 = T.alloc_buffer((8,))
        B2 = T.alloc_buffer((8,))
        for i in range(8):
            with T.block("B1"):
                vi = T.axis.spatial(8, i)
                B1[vi] = A[vi] + T.float32(1)
        for i in range(8):
            with T.block("B2"):
                vi = T.axis.spatial(8, i)
                B2[vi] = A[vi] * T.float32(2)
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                C[vi] = B1[vi] + B2[vi]


def test_reverse_compute_at_rejects_a_loop_not_enclosing_every_producer():
    sch = Schedule(TwoProducers)
    b1_loop = sch.get_loops(sch.get_block("B1"))[0]
    with pytest.raises(ScheduleError, match="every producer of the block must be under the loop"):
        sch.reverse_compute_at(sch.get_block("C"), b1_loop)


def test_reverse_compute_at_after_both_producers_share_a_loop():
    sch = Schedule(TwoProducers, debug_mask="all")
    b1_loop = sch.get_loops(sch.get_block("B1"))[0]
    sch.compute_at(sch.get_block("B2"), sch.get_loops(sch.get_block("C"))[0])
    sch.compute_at(sch.get_block("B1"), sch.get_loops(sch.get_block("C"))[0])
    with pytest.raises(ScheduleError, match="no longer exists"):
        sch.get(b1_loop)
    check_schedule(sch, TwoProducers)


def test_reverse_compute_at_rejects_a_block_reading_and_writing_one_buffer():
    @I.ir_module
    class InPlace:
        @T.prim_func
        def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
            B = T.alloc_buffer((8,))
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    B[vi] = A[vi]
            for i in range(8):
                with T.block("C"):
                    vi = T.axis.spatial(8, i)
                    C[vi] = C[vi] + B[vi]

    sch = Schedule(InPlace)
    with pytest.raises(ScheduleError, match="complete block"):
        sch.reverse_compute_at(sch.get_block("C"), sch.get_loops(sch.get_block("B"))[0])


def test_reverse_compute_at_a_reduction_over_produced_partial_sums():
    sch = Schedule(RowSum, debug_mask="all")
    block = sch.get_block("B")
    _, k = sch.get_loops(block)
    _, lane = sch.split(k, [None, 8])
    rf = sch.rfactor(lane, 1)
    i, _, _ = sch.get_loops(rf)
    sch.reverse_compute_at(block, i)
    assert len(sch.get_loops(block)) == 2
    check_schedule(sch, RowSum)


def test_reverse_compute_at_rejects_a_reduction_loop_of_the_producer():
    sch = Schedule(RowSum)
    block = sch.get_block("B")
    _, k = sch.get_loops(block)
    _, lane = sch.split(k, [None, 8])
    rf = sch.rfactor(lane, 1)
    i, k0, _ = sch.get_loops(rf)
    sch.reorder(k0, i)
    with pytest.raises(ScheduleError, match="would read partial results"):
        sch.reverse_compute_at(block, k0)


def test_reverse_compute_at_rejects_a_reduction_seeing_part_of_its_range():
    sch = Schedule(RowSum)
    block = sch.get_block("B")
    _, k = sch.get_loops(block)
    _, lane = sch.split(k, [None, 8])
    rf = sch.rfactor(lane, 1)
    i, k0, k1 = sch.get_loops(rf)
    sch.reorder(k1, i, k0)
    with pytest.raises(ScheduleError, match="only part of its range"):
        sch.reverse_compute_at(block, k1)


def test_compute_at_rejects_a_loop_of_its_own_nest():
    sch = Schedule(Matmul)
    c = sch.get_block("C")
    with pytest.raises(ScheduleError, match="already under the loop"):
        sch.compute_at(c, sch.get_loops(c)[0])
