"""Schedule state and handles: get_block, get_loops, child blocks, producers/consumers, copy,
seeds, get/get_sref/remove_rv, work_on, and the errors for bad handles."""
import pytest

from rvm.ir.module import IRModule
from rvm.script import ir as I
from rvm.script import tir as T
from rvm.tir.schedule import BlockRV, LoopRV, Schedule, ScheduleError, StmtSRef
from rvm.tir.stmt import Block, For

from tests.tir.schedule.common import Elementwise, Matmul, MatmulRelu


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


def test_get_block_and_loops():
    sch = Schedule(Matmul)
    block = sch.get_block("C", func_name="main")
    assert isinstance(block, BlockRV) and isinstance(sch.get(block), Block)
    loops = sch.get_loops(block)
    assert all(isinstance(lp, LoopRV) for lp in loops)
    assert [sch.get(lp).loop_var.name for lp in loops] == ["i", "j", "k"]
    assert all(isinstance(sch.get(lp), For) for lp in loops)
    assert isinstance(sch.get_sref(block), StmtSRef)
    assert sch.get_sref(sch.get(block)) is sch.get_sref(block)


def test_get_block_errors():
    sch = Schedule(Matmul)
    with pytest.raises(ScheduleError, match="no block has this name"):
        sch.get_block("missing")
    with pytest.raises(ValueError, match="no PrimFunc named 'nope'"):
        sch.get_block("C", func_name="nope")


def test_get_block_needs_func_name_with_several_functions():
    mod = IRModule({"f": Matmul["main"], "g": Matmul["main"].with_attr("global_symbol", "g")})
    sch = Schedule(mod)
    with pytest.raises(ValueError, match="pass func_name"):
        sch.get_block("C")
    sch.work_on("g")
    assert sch.get(sch.get_block("C")).name_hint == "C"


def test_child_blocks_producers_consumers():
    sch = Schedule(MatmulRelu)
    root = sch.get_block("root")
    names = [sch.get(b).name_hint for b in sch.get_child_blocks(root)]
    assert names == ["C", "D"]
    c, d = sch.get_block("C"), sch.get_block("D")
    assert [sch.get(b).name_hint for b in sch.get_consumers(c)] == ["D"]
    assert [sch.get(b).name_hint for b in sch.get_producers(d)] == ["C"]
    assert sch.get_producers(c) == [] and sch.get_consumers(d) == []
    i = sch.get_loops(c)[0]
    assert [sch.get(b).name_hint for b in sch.get_child_blocks(i)] == ["C"]


def test_copy_is_independent_and_keeps_handles():
    sch = Schedule(Matmul, seed=1)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    other = sch.copy()
    other.split(j, [None, 4])
    assert len(other.trace.insts) == len(sch.trace.insts) + 1
    assert len(sch.get_loops(block)) == 3 and len(other.get_loops(block)) == 4


def test_seed_and_fork_seed():
    a, b = Schedule(Matmul, seed=5), Schedule(Matmul, seed=5)
    assert a.fork_seed() == b.fork_seed()
    a.seed(9)
    b.seed(9)
    ja, jb = a.get_loops(a.get_block("C"))[1], b.get_loops(b.get_block("C"))[1]
    assert [a.get(v) for v in a.sample_perfect_tile(ja, 3)] == \
        [b.get(v) for v in b.sample_perfect_tile(jb, 3)]


def test_remove_rv_and_foreign_handles():
    sch = Schedule(Elementwise)
    block = sch.get_block("B")
    sch.remove_rv(block)
    with pytest.raises(ValueError, match="not a handle of this schedule"):
        sch.get(block)
    other = Schedule(Elementwise)
    with pytest.raises(ValueError, match="not a handle of this schedule"):
        other.get_loops(sch.get_block("C"))


def test_a_prim_func_is_scheduled_as_main():
    sch = Schedule(Matmul["main"])
    assert list(sch.state.roots) == ["main"] and sch.get(sch.get_block("C")) is not None


def test_schedule_rejects_functions_not_in_block_form():
    from rvm.tir.transform.pipeline import lower_module
    with pytest.raises(ValueError, match="not in TensorIR form"):
        Schedule(lower_module(Matmul))
    with pytest.raises(TypeError, match="IRModule or a PrimFunc"):
        Schedule(3)


def test_mod_is_a_snapshot():
    sch = Schedule(Elementwise)
    before = sch.mod
    sch.split(sch.get_loops(sch.get_block("B"))[1], [None, 4])
    assert before["main"] is Elementwise["main"]
