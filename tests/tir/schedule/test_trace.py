"""Traces: printing as seed 004 shows them, replay (objects, printed Python, JSON),
with_decision, simplified, postprocessing, and malformed JSON."""
import json

import pytest

import rvm
from rvm.ir import assert_structural_equal, structural_equal
from rvm.tir.schedule import Schedule, Trace
from rvm.tir.schedule.trace import trace_from_json

from tests.tir.schedule.common import Matmul, MatmulRelu, check_replay


def stochastic_schedule_mm(sch):
    block_C = sch.get_block("C", "main")
    i, j, k = sch.get_loops(block=block_C)
    j_factors = sch.sample_perfect_tile(loop=j, n=2)
    j_0, j_1 = sch.split(loop=j, factors=j_factors)
    sch.reorder(i, j_0, k, j_1)
    sch.decompose_reduction(block_C, k)
    return sch


SEED_TRACE = """# from rvm import tir
def apply_trace(sch: tir.Schedule) -> None:
  b0 = sch.get_block(name="C", func_name="main")
  l1, l2, l3 = sch.get_loops(block=b0)
  v4, v5 = sch.sample_perfect_tile(loop=l2, n=2, max_innermost_factor=16, decision=[8, 16])
  l6, l7 = sch.split(loop=l2, factors=[v4, v5], preserve_unit_iters=True, \
disable_predication=False)
  sch.reorder(l1, l6, l3, l7)
  b8 = sch.decompose_reduction(block=b0, loop=l3)"""


def _with_decision(decision):
    """The seed's schedule with the tile decision fixed through a fresh trace."""
    sch = stochastic_schedule_mm(Schedule(Matmul, seed=0))
    inst = sch.trace.insts[2]
    trace = sch.trace.with_decision(inst, decision, remove_postproc=True)
    out = Schedule(Matmul)
    trace.apply_to_schedule(out, remove_postproc=True)
    return out


def test_trace_prints_as_the_seed_shows_it():
    assert str(_with_decision([8, 16]).trace) == SEED_TRACE


def test_print_exec_replay_and_json_round_trip():
    for seed in range(5):
        sch = stochastic_schedule_mm(Schedule(Matmul, seed=seed))
        check_replay(sch, Matmul)


def test_replay_reuses_decisions():
    sch = stochastic_schedule_mm(Schedule(Matmul, seed=11))
    for seed in range(3):
        again = Schedule(Matmul, seed=seed)
        sch.trace.apply_to_schedule(again, remove_postproc=False)
        assert_structural_equal(again.mod, sch.mod)
        assert str(again.trace) == str(sch.trace)


def test_with_decision_changes_only_that_decision():
    a, b = _with_decision([8, 16]), _with_decision([32, 4])
    assert not structural_equal(a.mod, b.mod)
    j1 = [lp for lp in a.get_loops(a.get_block("C_update"))][-1]
    assert a.get(j1).extent.value == 16
    j1 = [lp for lp in b.get_loops(b.get_block("C_update"))][-1]
    assert b.get(j1).extent.value == 4


def test_with_decision_rejects_foreign_instruction():
    sch = stochastic_schedule_mm(Schedule(Matmul))
    other = stochastic_schedule_mm(Schedule(Matmul))
    with pytest.raises(ValueError, match="not an instruction of this trace"):
        sch.trace.with_decision(other.trace.insts[2], [8, 16], remove_postproc=False)


def test_decision_provider_mutates_on_the_fly():
    sch = stochastic_schedule_mm(Schedule(Matmul))
    again = Schedule(Matmul)

    def provider(inst, inputs, attrs, decision):
        return [4, 32] if inst.kind.name == "SamplePerfectTile" else decision

    sch.trace.apply_to_schedule(again, remove_postproc=False, decision_provider=provider)
    assert again.trace.get_decision(again.trace.insts[2]) == [4, 32]


def test_simplified_drops_unused_pure_instructions():
    sch = Schedule(MatmulRelu)
    sch.get_block("D")
    block = sch.get_block("C")
    sch.get_loops(block)
    sch.sample_categorical([1, 2], [0.5, 0.5])
    i, j, k = sch.get_loops(block)
    sch.parallel(i)
    kinds = [inst.kind.name for inst in sch.trace.simplified(remove_postproc=False).insts]
    assert kinds == ["GetBlock", "GetLoops", "Parallel"]


def test_postproc_instructions_are_removable():
    sch = Schedule(MatmulRelu)
    i = sch.get_loops(sch.get_block("C"))[0]
    sch.enter_postproc()
    sch.parallel(i)
    full, cut = sch.trace, sch.trace.as_json(remove_postproc=True)
    assert [x[0] for x in cut[0]] == ["GetBlock", "GetLoops"]
    assert full.as_python()[-2:] == ["sch.enter_postproc()", "sch.parallel(loop=l1)"]
    again = Schedule(MatmulRelu)
    full.apply_to_schedule(again, remove_postproc=True)
    assert_structural_equal(again.mod, MatmulRelu)


def test_json_is_plain_data_with_named_handles():
    sch = stochastic_schedule_mm(Schedule(Matmul, seed=2))
    data = sch.trace.as_json()
    assert json.loads(json.dumps(data)) == data
    assert data[0][0] == ["GetBlock", [], ["C", "main"], ["b0"]]
    assert data[1][0][0] == 2 and sum(1 for _ in data[1]) == 1


def test_malformed_json_is_rejected():
    with pytest.raises(ValueError, match="before defining it"):
        trace_from_json([[["GetLoops", ["b0"], [], ["l1"]]], []])
    with pytest.raises(ValueError, match="unknown instruction kind"):
        trace_from_json([[["Frobnicate", [], [], []]], []])
    with pytest.raises(ValueError, match=r"\[instructions, decisions\]"):
        trace_from_json({"insts": []})
    with pytest.raises(ValueError, match="out of range"):
        trace_from_json([[], [[3, [1, 2]]]])


def test_trace_of_every_instruction_kind_prints_and_replays():
    sch = Schedule(MatmulRelu, seed=4, debug_mask="all")
    c, d = sch.get_block("C"), sch.get_block("D")
    cl = sch.cache_write(c, 0, "local")
    i, j, k = sch.get_loops(c)
    v = sch.sample_perfect_tile(j, 3, max_innermost_factor=8)
    j0, j1, j2 = sch.split(j, v)
    sch.reorder(i, j0, k, j1, j2)
    sch.reverse_compute_at(cl, j0)
    sch.reverse_compute_inline(d)
    sch.annotate(c, "meta_schedule.tiling_structure", "SSRSRS")
    unroll = sch.sample_categorical([0, 16], [0.5, 0.5])
    sch.annotate(sch.get_block("root"), "meta_schedule.unroll_explicit", unroll)
    fused = sch.fuse(i, j0)
    sch.parallel(fused)
    sch.vectorize(j2)
    sch.decompose_reduction(c, k)
    check_replay(sch, MatmulRelu)
    text = str(sch.trace)
    assert "sch.cache_write(block=b0, write_buffer_index=0, storage_scope=\"local\"" in text
    assert isinstance(Trace(sch.trace.insts, sch.trace.decisions), Trace)
    rvm.build(sch.mod)
