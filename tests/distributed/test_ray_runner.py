"""RayRunner: candidates compiled and timed on Ray workers, and what a lost worker costs.

A candidate whose worker is killed while measuring goes once more to
another worker; one that loses two workers is recorded as failed with the
reason. Neither is ever recorded with a time it did not earn.
"""
import time

import pytest

from rvm.distributed import RayRunner
from rvm.distributed.ray_runner import _actor_options, measure_job
from rvm.meta_schedule.arg_info import ArgInfo
from rvm.meta_schedule.builder import BuilderInput, LocalBuilder
from rvm.meta_schedule.runner import EvaluatorConfig, RunnerInput, create
from rvm.runtime.compiler import default_compiler
from rvm.support.hardware import hardware_fingerprint
from tests.meta_schedule import kernels

LOCAL = hardware_fingerprint(default_compiler())  # this machine's
pytestmark = pytest.mark.distributed

FAST = EvaluatorConfig(number=1, repeat=2, min_repeat_ms=0)
# One measurement lasts a second: long enough to kill its worker in the middle.
SLOW = EvaluatorConfig(number=1, repeat=1, min_repeat_ms=1000)


@pytest.fixture(scope="module")
def built():
    builder = LocalBuilder(max_workers=2)
    names = ["Copy", "Crash", "Wrong"]
    results = builder.build([BuilderInput(getattr(kernels, n), "c") for n in names])
    builder.close()
    assert all(r.error_msg is None for r in results)
    return dict(zip(names, results))


def _inputs(built, names):
    args_info = ArgInfo.from_entry_func(kernels.Copy)
    return [RunnerInput.from_builder_result(built[n], args_info, "main", built["Copy"])
            for n in names]


def _wait_for(condition, timeout=60.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting for the runner"
        time.sleep(0.05)


def test_candidates_are_checked_and_timed_on_workers(ray_cluster, built):
    runner = create(RayRunner(num_workers=2, timeout_sec=20, evaluator_config=FAST))
    try:
        ok, crash, wrong = [f.result() for f in runner.run(_inputs(built, ["Copy", "Crash",
                                                                            "Wrong"]))]
    finally:
        runner.close()
    assert ok.error_msg is None and len(ok.run_secs) == 2 and min(ok.run_secs) > 0
    assert ok.fingerprint == LOCAL  # the workers share this machine
    assert crash.run_secs is None and "SIGABRT" in crash.error_msg
    assert wrong.error_msg.startswith("wrong result: argument 1")
    assert runner.retried == 0 and not runner.workers


def test_a_killed_worker_costs_a_retry_then_a_failure(ray_cluster, built):
    ray = ray_cluster
    runner = RayRunner(num_workers=1, timeout_sec=30, evaluator_config=SLOW)
    try:
        # Killed once: measured again on a second worker, with a real time.
        (future,) = runner.run(_inputs(built, ["Copy"]))
        _wait_for(lambda: runner.in_flight == 1)
        first = runner.workers[0]
        ray.kill(first)
        result = future.result()
        assert runner.retried == 1 and len(runner.lost) == 1
        assert result.error_msg is None and result.fingerprint == LOCAL
        assert min(result.run_secs) > 0

        # Killed twice: recorded as failed, with the reason.
        (future,) = runner.run(_inputs(built, ["Copy"]))
        for _ in range(2):
            _wait_for(lambda: runner.in_flight == 1 and runner.workers)
            worker = runner.workers[0]
            ray.kill(worker)
            _wait_for(lambda: worker not in runner.workers or future.done())
        result = future.result()
        assert result.run_secs is None
        assert result.error_msg.startswith("lost its worker twice; last: ")
        assert "Actor" in result.error_msg
    finally:
        runner.close()


def test_bad_arguments(built):
    with pytest.raises(ValueError, match="num_workers >= 1"):
        RayRunner(num_workers=0)
    with pytest.raises(TypeError, match="resources must be a dict"):
        RayRunner(resources=2)
    no_source = RunnerInput(built["Copy"].artifact_path, args_info=[], source=None)
    with pytest.raises(ValueError, match="needs the candidate's C source"):
        measure_job(no_source, FAST, 0)
    assert _actor_options({"CPU": 2, "GPU": 1, "fast_cpu": 1}) == {
        "num_cpus": 2.0, "num_gpus": 1.0, "resources": {"fast_cpu": 1.0}}
