"""The tuning pipeline: a batch compiles while the next batch (of another task) is searched,
measuring runs alone, and the run's choices do not depend on how long compiles take.
The builder here compiles nothing and takes the time the test gives it; the runner
chooses every measured time."""
import random
import threading
import time

import pytest

import rvm
from rvm import meta_schedule as ms
from rvm.meta_schedule.builder import BuildFuture, PyBuilder
from rvm.meta_schedule.search_strategy.search_strategy import SearchStrategy
from rvm.meta_schedule.task_scheduler import GradientBased, RoundRobin
from tests.meta_schedule.fakes import NoCompiler, TimesRunner
from tests.meta_schedule.workloads import MyModule, MyModuleMixture

TARGET = "llvm --num-cores=1"
TWO_TASKS = rvm.IRModule({"mm": MyModule["main"], "linear0": MyModuleMixture["linear0"]})


class SlowCompiler(PyBuilder):
    """NoCompiler's results, each batch ready ``delay()`` seconds after ``submit`` (a
    thread sleeps meanwhile); ``spans`` holds each batch's (start, end, its sources)."""

    def __init__(self, delay):
        self.delay = delay
        self.spans = []

    def build(self, builder_inputs):
        return self.submit(builder_inputs).result()

    def submit(self, builder_inputs):
        results = NoCompiler().build(builder_inputs)
        span = [time.perf_counter(), None, [r.source for r in results]]
        self.spans.append(span)
        sleeper = threading.Thread(target=time.sleep, args=(self.delay(),))
        sleeper.start()

        def result():
            sleeper.join()
            if span[1] is None:
                span[1] = time.perf_counter()
            return results

        return BuildFuture(lambda: not sleeper.is_alive(), result)


class TimedRunner(TimesRunner):
    """TimesRunner noting when each measurement ran."""

    def __init__(self, secs):
        super().__init__(secs)
        self.times = []

    def run(self, runner_inputs):
        start = time.perf_counter()
        out = super().run(runner_inputs)
        self.times.append((start, time.perf_counter()))
        return out


class FirstLive(RoundRobin):
    """Always the first task it may pick: it would search a task twice in a row."""

    def next_task_id(self):
        live = self._live()
        return live[0] if live else -1


def _tune(work_dir, builder, runner, scheduler, seed=4, trials=24, cost_model="random"):
    return ms.tune_tir(mod=TWO_TASKS, target=TARGET, work_dir=str(work_dir),
                       max_trials_global=trials, num_trials_per_iter=4, seed=seed,
                       strategy="replay-trace", builder=builder, runner=runner,
                       cost_model=cost_model, task_scheduler=scheduler, progress=False)


@pytest.fixture
def searches(monkeypatch):
    """(task name, start, end) of every search for sampled candidates."""
    spans = []
    generate = SearchStrategy.generate_measure_candidates

    def timed(self, limit=None):
        start = time.perf_counter()
        out = generate(self, limit)
        if limit != 0:  # (limit 0: the baselines, nothing is searched)
            spans.append((self.context.task_name, start, time.perf_counter()))
        return out

    monkeypatch.setattr(SearchStrategy, "generate_measure_candidates", timed)
    return spans


def _overlap(a, b):
    return a[0] < b[1] and b[0] < a[1]


def test_the_next_batch_is_searched_while_this_one_compiles(tmp_path, searches):
    builder = SlowCompiler(lambda: 0.3)
    runner = TimedRunner(lambda n, *_: [1e-3 * 0.97 ** n])  # every batch improves
    _tune(tmp_path, builder, runner, FirstLive(remeasure_top_k=0, stop_after_trials=0))
    database = ms.database.JSONDatabase(work_dir=str(tmp_path))
    assert len(database) == 24
    # a compile's task: that of the search that ended last before it (the baselines,
    # compiled before any search, are left out)
    overlapping = []
    for start, end, _ in builder.spans:
        before = [s for s in searches if s[2] <= start]
        during = [s for s in searches if _overlap((s[1], s[2]), (start, end))]
        if before and during:
            overlapping.append((before[-1][0], [s[0] for s in during]))
    assert len(overlapping) >= 3, (builder.spans, searches)
    # never the compiling batch's own task: its next search waits for its measurements
    for compiling, searched in overlapping:
        assert compiling not in searched
    # measurements run alone: no compile and no search beside them
    for run in runner.times:
        for start, end, _ in builder.spans:
            assert not _overlap(run, (start, end))
        for _, start, end in searches:
            assert not _overlap(run, (start, end))


@pytest.mark.parametrize("make_scheduler", [
    lambda: RoundRobin(remeasure_top_k=0, stop_after_trials=0),
    lambda: GradientBased(remeasure_top_k=0)], ids=["round-robin", "gradient"])
def test_choices_do_not_depend_on_how_long_compiles_take(tmp_path, make_scheduler):
    def times(n, index, seen):
        return [1e-3 * (1 + (index * 7919 % 13) / 13)]  # a kernel's time: its own

    rng = random.Random(0)
    runs = []
    for k, builder in enumerate([NoCompiler(), SlowCompiler(lambda: rng.uniform(0, 0.05))]):
        runner = TimesRunner(times)
        _tune(tmp_path / str(k), builder, runner, make_scheduler(), trials=20,
              cost_model="gbt")
        runs.append(runner.calls)
    assert len(runs[0]) == 20
    assert runs[0] == runs[1]
