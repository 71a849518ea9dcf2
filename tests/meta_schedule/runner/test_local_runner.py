"""LocalRunner: candidates checked against the unscheduled kernel and timed in workers.

A crashing, a hanging and a wrong candidate each come back as a failed
RunnerResult with its reason, and the runner goes on measuring the next one.
"""
import multiprocessing
import time

import pytest

from rvm.meta_schedule.arg_info import ArgInfo
from rvm.meta_schedule.builder import BuilderInput, LocalBuilder
from rvm.meta_schedule.runner import EvaluatorConfig, LocalRunner, RunnerInput, RunnerResult
from rvm.meta_schedule.runner.evaluate import measuring_alone
from rvm.runtime.compiler import default_compiler
from rvm.support.hardware import hardware_fingerprint
from tests.meta_schedule import kernels

FAST = EvaluatorConfig(number=1, repeat=2, min_repeat_ms=0)

LOCAL = hardware_fingerprint(default_compiler())  # this machine's


@pytest.fixture(scope="module")
def built():
    builder = LocalBuilder(max_workers=2)
    names = ["Copy", "Crash", "Hang", "Wrong"]
    results = builder.build([BuilderInput(getattr(kernels, n), "c") for n in names])
    builder.close()
    assert all(r.error_msg is None for r in results)
    return dict(zip(names, results))


def _inputs(built, names, reference=True):
    args_info = ArgInfo.from_entry_func(kernels.Copy)
    ref = built["Copy"] if reference else None
    return [RunnerInput.from_builder_result(built[n], args_info, "main", ref) for n in names]


@pytest.mark.slow
def test_failures_are_recorded_with_reasons_and_the_runner_goes_on(built):
    runner = LocalRunner(timeout_sec=2, evaluator_config=FAST)
    try:
        futures = runner.run(_inputs(built, ["Copy", "Crash", "Hang", "Wrong", "Copy"]))
        ok, crash, hang, wrong, again = [f.result() for f in futures]
    finally:
        runner.close()
    assert ok.error_msg is None and len(ok.run_secs) == 2 and min(ok.run_secs) > 0
    assert ok.fingerprint == LOCAL
    assert crash.run_secs is None and "SIGABRT" in crash.error_msg
    assert hang.error_msg == "timed out after 2 s"
    assert wrong.error_msg.startswith("wrong result: argument 1 (float32[16]) differs from the "
                                      "unscheduled kernel in 16 elements")
    assert again.error_msg is None


def test_without_a_reference_nothing_is_checked(built):
    runner = LocalRunner(timeout_sec=10, evaluator_config=FAST)
    try:
        (result,) = [f.result() for f in runner.run(_inputs(built, ["Wrong"], reference=False))]
    finally:
        runner.close()
    assert result.error_msg is None


def test_futures_report_done(built):
    runner = LocalRunner(timeout_sec=10, evaluator_config=FAST)
    try:
        (future,) = runner.run(_inputs(built, ["Copy"]))
        future.result()
        assert future.done()
    finally:
        runner.close()


def test_bad_configs():
    with pytest.raises(ValueError, match="number >= 1"):
        EvaluatorConfig(number=0)
    with pytest.raises(ValueError, match="cache_flush"):
        EvaluatorConfig(enable_cpu_cache_flush=True)
    with pytest.raises(ValueError, match="either"):
        RunnerResult()


def _hold_measure_lock(path, times):
    with measuring_alone(path):
        start = time.monotonic()
        time.sleep(0.2)
        times.put((start, time.monotonic()))


def test_measurements_on_one_machine_never_overlap(tmp_path):
    # Every runner's worker times its candidate under one lock per machine: candidates
    # timed at once slow each other, unequally, and would swap places in the ranking.
    context = multiprocessing.get_context("fork")
    times = context.Queue()
    holders = [context.Process(target=_hold_measure_lock, args=(tmp_path / "lock", times))
               for _ in range(3)]
    for p in holders:
        p.start()
    spans = sorted(times.get(timeout=60) for _ in holders)
    for p in holders:
        p.join(60)
    assert all(p.exitcode == 0 for p in holders)
    for (_, end), (next_start, _) in zip(spans, spans[1:]):
        assert next_start >= end, spans
