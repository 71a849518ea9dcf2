"""An input that reaches the time limit on one engine only is run again on both with ten
times the limit: ``timing`` when the engines then agree, an engine mismatch (naming both
runs) when they do not."""
import time

import pytest

import rvm
from fuzz import child
from rvm.bytecode.builder import ExecBuilder

LIMIT = 0.2  # the runs' time_limit here; the re-run's is 2 s
CALLS = []


@rvm.register_func("testing.fuzz_sleep_on", override=True)
def _sleep_on(plan):
    """Sleeps on the calls ``plan`` names ("0:0.4,2:2.2": 0.4 s on the first, 2.2 s on the
    third), counting calls from 0."""
    for entry in filter(None, str(plan).split(",")):
        call, seconds = entry.split(":")
        if int(call) == len(CALLS):
            time.sleep(float(seconds))
    CALLS.append(1)
    return 0


def _input(plan):
    """An executable whose main calls testing.fuzz_sleep_on, then takes one step (a VM
    call), where a run past its time limit stops."""
    ib = ExecBuilder()
    with ib.function("main", num_inputs=0):
        ib.emit_call("testing.fuzz_sleep_on", args=[ib.c(ib.convert_constant(plan))],
                     dst=ib.r(0))
        ib.emit_call("step", args=[ib.r(0)], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    with ib.function("step", num_inputs=1):
        ib.emit_ret(ib.r(0))
    return ib.get().save_to_bytes()


@pytest.fixture
def target(monkeypatch):
    monkeypatch.setitem(child.VM_LIMITS, "time_limit", LIMIT)
    CALLS.clear()
    retries = []
    target = child.LoaderTarget(on_retry=lambda: retries.append(len(CALLS)))
    target.retries = retries
    return target


def _calls(ex):
    return [("main", [])]


def test_a_time_limit_reached_on_one_engine_only_is_timing(target):
    stages, mismatch = target.execute(_input("0:0.4"), _calls)  # the first engine's run
    assert mismatch is None
    assert stages == ["loaded", "ran_with_error", "ran", "timing"]
    assert target.retries == [2] and len(CALLS) == 4  # both engines ran again


def test_engines_that_still_differ_with_the_larger_limit_are_a_mismatch(target):
    stages, mismatch = target.execute(_input("0:0.4,2:2.2"), _calls)  # the first engine's
    assert stages == ["loaded", "ran_with_error", "ran", "engine_mismatch"]
    assert mismatch == "native: TimeoutError, python: ran; again with time_limit 2 s: " \
                       "native: TimeoutError, python: ran"
    assert target.retries == [2]


def test_engines_agreeing_or_differing_otherwise_run_once(target):
    stages, mismatch = target.execute(_input(""), _calls)
    assert (stages, mismatch) == (["loaded", "ran", "ran"], None)
    assert target.retries == [] and len(CALLS) == 2
