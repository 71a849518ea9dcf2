"""What keeps whole-model tuning within minutes: a task whose best stops improving stops
(early stopping), and a kernel the model spends a negligible share of its time in gets
no sampled trials. Builders and runners here are stand-ins (no C compiler, times chosen
by the test), so the scheduler's decisions are exact and the tests take a second."""
import pytest

from rvm import meta_schedule as ms
from rvm.meta_schedule.task_scheduler import GradientBased, RoundRobin
from rvm.meta_schedule.task_scheduler.allocation import allocate
from tests.meta_schedule.fakes import NoCompiler, TimesRunner
from tests.meta_schedule.workloads import MyModule

TARGET = "llvm --num-cores=1"


def _tune(work_dir, runner, scheduler, trials=40):
    return ms.tune_tir(mod=MyModule, target=TARGET, work_dir=str(work_dir),
                       max_trials_global=trials, num_trials_per_iter=4, seed=1,
                       strategy="replay-trace", builder=NoCompiler(), runner=runner,
                       task_scheduler=scheduler, progress=False)


def test_a_task_whose_best_stops_improving_stops(tmp_path):
    runner = TimesRunner(lambda n, *_: [1e-3])  # no candidate ever beats the first
    scheduler = RoundRobin(remeasure_top_k=0, stop_after_trials=8)
    database = _tune(tmp_path, runner, scheduler)
    # the baselines (2), then two batches of 4 without a gain of 1%: stopped at 10 of 40
    assert len(runner.calls) == 10
    assert len(database.get_all_tuning_records()) == 10
    log = (tmp_path / "logs" / "tune.log").read_text()
    assert "improved by less than 1% over its last 8 trials" in log


def test_a_task_that_keeps_improving_spends_its_budget(tmp_path):
    runner = TimesRunner(lambda n, *_: [1e-3 * 0.9 ** n])  # every candidate 10% faster
    _tune(tmp_path, runner, RoundRobin(remeasure_top_k=0, stop_after_trials=8), trials=20)
    assert len(runner.calls) == 20


def test_early_stopping_can_be_turned_off(tmp_path):
    runner = TimesRunner(lambda n, *_: [1e-3])
    _tune(tmp_path, runner, RoundRobin(remeasure_top_k=0, stop_after_trials=0), trials=20)
    assert len(runner.calls) == 20


def test_a_negligible_share_of_the_model_time_gets_no_trials():
    assert allocate([97.0, 3.0], [100, 100], 8, min_share=0.05) == [8, 0]
    assert allocate([96.0, 4.0], [100, 100], 25, min_share=0.03) == [24, 1]
    assert allocate([96.0, 4.0], [100, 100], 25) == [24, 1]
    assert allocate([1.0, 1.0], [5, 5], 6, min_share=0.9) == [0, 0]


@pytest.mark.parametrize("kwargs, message", [
    ({"min_share": 1.0}, "min_share"), ({"min_share": -0.1}, "min_share"),
    ({"stop_after_trials": -1}, "stop_after_trials"),
    ({"min_improvement": 1.5}, "min_improvement")])
def test_bad_settings_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        GradientBased(**kwargs)
    if "min_share" in kwargs:
        with pytest.raises(ValueError, match="min_share must be in"):
            allocate([1.0], [1], 1, **kwargs)
