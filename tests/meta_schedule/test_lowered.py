"""lowered_module: a candidate's lowered kernel computed once per schedule state, kept by
the module (nothing is attached to the Schedule) and dropped with the schedule."""
import gc
import weakref

from rvm import tir
from rvm.meta_schedule import lowered
from rvm.meta_schedule.lowered import lowered_module
from tests.meta_schedule.workloads import MyModule


def test_lowered_once_per_state_and_again_after_a_primitive():
    sch = tir.Schedule(MyModule)
    before = dict(vars(sch))
    first = lowered_module(sch)
    assert lowered_module(sch) is first
    assert vars(sch) == before  # no attribute hung on the schedule
    sch.split(sch.get_loops(sch.get_block("C"))[0], [None, 4])
    assert lowered_module(sch) is not first


def test_the_cache_entry_goes_with_its_schedule():
    held = len(lowered._LOWERED)
    sch = tir.Schedule(MyModule)
    lowered_module(sch)
    assert len(lowered._LOWERED) == held + 1
    gone = weakref.ref(sch)
    del sch
    gc.collect()
    assert gone() is None and len(lowered._LOWERED) == held


def test_a_module_that_does_not_lower_is_none_and_not_lowered_again(monkeypatch):
    calls = []

    def failing(mod):
        calls.append(mod)
        raise ValueError("cannot lower")

    monkeypatch.setattr(lowered, "lower_module", failing)
    sch = tir.Schedule(MyModule)
    assert lowered_module(sch) is None and lowered_module(sch) is None
    assert len(calls) == 1
