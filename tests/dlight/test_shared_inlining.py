"""The rules tried one after the other on a kernel inline its producers once
(``shared_inlining``): each rule still starts from a fresh schedule and ends with the trace
and the kernel it made when it inlined them itself."""
import pytest

from rvm.dlight import CPUInfo, RULES
from rvm.dlight.analysis import inline_producers, shared_inlining
from rvm.dlight.base import trace_default_schedule
from rvm.te.create_prim_func import create_prim_func
from rvm.te.operation import compute, placeholder
from rvm.tir.schedule.error import ScheduleError
from rvm.tir.schedule.schedule import Schedule
from tests.dlight.test_attention import _pv
from tests.dlight.test_attention_scores import causal_scores
from tests.dlight.test_pad_columns import narrow
from tests.dlight.test_row_tiles import dense_relu
from tests.dlight.test_softmax_partition import softmax

INFO = CPUInfo(vector_bytes=64, cores=2)


def _chain(producers=3):
    """``producers`` elementwise steps before an output: the generic rule's, after the
    matmul and attention rules inlined them and declined."""
    x = placeholder((4, 100), name="x")
    y = x
    for k in range(producers):
        y = compute((4, 100), _step(y, float(k)), name=f"p{k}")
    return create_prim_func([x, compute((4, 100), lambda i, j: y[i, j] - 1.0, name="out")])


def _step(y, offset):
    return lambda i, j: y[i, j] * 2.0 + offset


def _each_rule_alone(func, info):
    """``trace_default_schedule`` without the shared inlining: every rule inlines for itself."""
    for rule in RULES:
        sch = Schedule(func)
        try:
            if not rule.prepare(sch, info) or not rule.apply(sch, info):
                continue
        except (ScheduleError, ValueError, TypeError):
            continue
        return sch, rule.name
    return None


KERNELS = {"chain": _chain(), "softmax": softmax, "dense-relu": dense_relu, "narrow": narrow,
           "attention-pv": _pv(16), "causal-scores": causal_scores}


@pytest.mark.parametrize("name", list(KERNELS))
def test_the_default_schedule_and_its_trace_are_those_of_rules_inlining_alone(name):
    shared_sch, shared_rule = trace_default_schedule(KERNELS[name], RULES, INFO)
    alone_sch, alone_rule = _each_rule_alone(KERNELS[name], INFO)
    assert shared_rule == alone_rule
    assert str(shared_sch.trace) == str(alone_sch.trace)
    assert shared_sch.mod["main"].script() == alone_sch.mod["main"].script()


def _count_inlines(monkeypatch):
    calls = []
    original = Schedule.compute_inline

    def counted(self, block):
        calls.append(block)
        return original(self, block)

    monkeypatch.setattr(Schedule, "compute_inline", counted)
    return calls


def test_a_kernel_declined_by_two_rules_is_inlined_once(monkeypatch):
    calls = _count_inlines(monkeypatch)
    func = _chain(3)
    _each_rule_alone(func, INFO)
    assert len(calls) == 9  # matmul, attention and generic: three producers each
    calls.clear()
    _, rule = trace_default_schedule(func, RULES, INFO)
    assert rule == "generic" and len(calls) == 3


def _script(sch):
    return sch.mod["main"].script()


def test_a_shared_result_is_a_copy_each_schedule_changes_on_its_own(monkeypatch):
    func = _chain(2)
    with shared_inlining():
        first = Schedule(func)
        blocks = inline_producers(first)
        inlined, steps = _script(first), len(first.trace.insts)
        first.parallel(first.get_loops(blocks[-1])[0])
        calls = _count_inlines(monkeypatch)
        second = Schedule(func)
        again = inline_producers(second)
        assert not calls  # the first result, not inlined again
        assert _script(second) == inlined and len(second.trace.insts) == steps
        assert [second.get(b).name_hint for b in again] == ["out"]
        second.vectorize(second.get_loops(again[-1])[-1])  # the handles are the copy's
        third = Schedule(func)
        inline_producers(third)
    assert "T.parallel" in _script(first) and "T.parallel" not in _script(second)
    assert "T.vectorized" not in _script(first)
    assert _script(third) == inlined and len(third.trace.insts) == steps


def test_only_a_fresh_schedule_of_the_same_function_and_keep_shares(monkeypatch):
    func = _chain(2)
    calls = _count_inlines(monkeypatch)
    with shared_inlining():
        inline_producers(Schedule(func))
        assert len(calls) == 2
        started = Schedule(func)
        started.get_block("root")  # a traced step: no longer fresh
        inline_producers(started)
        assert len(calls) == 4
        kept = Schedule(func)
        left = inline_producers(kept, keep=lambda block: block.name_hint == "p0")
        assert [kept.get(b).name_hint for b in left] == ["p0", "out"]
        other = Schedule(_chain(2))  # the same structure, another function
        inline_producers(other)
        assert len(calls) == 7
    inline_producers(Schedule(func))  # outside the block: nothing is kept
    assert len(calls) == 9
