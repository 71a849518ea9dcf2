"""Robust measurement: records are ranked by their fastest time, and a run measures its
best candidates again at the end, so a busy moment during one candidate's measurement
neither hides it nor crowns another."""
import zlib

import pytest

from rvm import meta_schedule as ms
from rvm.meta_schedule.database import JSONDatabase, MemoryDatabase, TuningRecord
from rvm.meta_schedule.runner import LocalRunner, Runner, RunnerFuture, RunnerResult
from rvm.meta_schedule.runner.runner import EvaluatorConfig
from rvm.meta_schedule.task_scheduler import GradientBased, RoundRobin
from tests.meta_schedule.workloads import MyModule

pytestmark = pytest.mark.slow

TARGET = "llvm --num-cores=1"
TRIALS = 6
SPIKE = 4e-3


class SpikyRunner(Runner):
    """Times that are a function of the candidate's C source (1 to 2 ms); each
    candidate's first measurement is slowed (a busy moment) to 4 ms minus its time, so the
    first measurements rank the candidates in reverse; later ones are not slowed."""

    def __init__(self):
        self.true_secs = {}  # source -> seconds
        self.calls = []

    def run(self, runner_inputs):
        results = []
        for runner_input in runner_inputs:
            source = runner_input.source
            crc = zlib.crc32(source.encode())
            first = source not in self.true_secs
            secs = self.true_secs.setdefault(source, 1e-3 * (1 + crc % 1000 / 1000))
            self.calls.append(source)
            measured = SPIKE - secs if first else secs
            results.append(RunnerFuture.of(RunnerResult([measured] * 3, fingerprint="fp")))
        return results


def _tune(work_dir, runner, scheduler):
    return ms.tune_tir(mod=MyModule, target=TARGET, work_dir=str(work_dir),
                       max_trials_global=TRIALS, num_trials_per_iter=3, seed=5,
                       strategy="replay-trace", runner=runner, task_scheduler=scheduler,
                       progress=False)


def _best_source(database):
    (best,) = database.get_top_k(database.workloads[0], 1, fingerprint="fp")
    return best


def test_records_are_ranked_by_their_fastest_measurement():
    db = MemoryDatabase()
    workload = db.commit_workload(MyModule)
    spiky = TuningRecord([[], []], workload, [9e-3, 1e-3, 1e-3], fingerprint="fp",
                         candidate_hash=1)
    steady = TuningRecord([[], []], workload, [2e-3, 2e-3, 2e-3], fingerprint="fp",
                          candidate_hash=2)
    for record in (steady, spiky):
        db.commit_tuning_record(record)
    assert spiky.mean_run_sec > steady.mean_run_sec
    assert db.get_top_k(workload, 2) == [spiky, steady]
    # the printed record leads with what it is ranked by
    assert "best 1000.00 us, mean 3666.67 us" in repr(spiky)


def test_remeasuring_the_best_candidates_finds_the_one_a_spike_hid(tmp_path):
    runner = SpikyRunner()
    database = _tune(tmp_path / "remeasured", runner, RoundRobin(remeasure_top_k=TRIALS,
                                                                 remeasure_rounds=2))
    records = database.get_all_tuning_records()
    assert len(records) == TRIALS and all(r.is_valid for r in records)
    sources = set(runner.true_secs)
    assert len(sources) == TRIALS and len(runner.calls) == TRIALS * 3  # measured, then 2 rounds
    # Every record holds its first measurement and the two later ones.
    assert all(len(r.run_secs) == 9 for r in records)
    truest = min(runner.true_secs.values())
    assert _best_source(database).best_run_sec == pytest.approx(truest)

    # Without remeasuring, the spikes decide: the slowest kernel is the one chosen.
    plain_runner = SpikyRunner()
    plain = _tune(tmp_path / "plain", plain_runner, RoundRobin(remeasure_top_k=0))
    assert all(len(r.run_secs) == 3 for r in plain.get_all_tuning_records())
    assert SPIKE - _best_source(plain).best_run_sec == \
        pytest.approx(max(plain_runner.true_secs.values()))

    # The work_dir keeps one record per candidate, with the added times.
    fresh = JSONDatabase(work_dir=str(tmp_path / "remeasured"))
    assert len(fresh) == TRIALS
    assert sorted(r.run_secs for r in fresh.get_all_tuning_records()) == \
        sorted(r.run_secs for r in records)
    assert _best_source(fresh).best_run_sec == pytest.approx(truest)


def test_only_the_top_k_of_this_run_are_remeasured(tmp_path):
    runner = SpikyRunner()
    database = _tune(tmp_path, runner, GradientBased(remeasure_top_k=2, remeasure_rounds=1))
    # the two fastest, and the default kernel when it is not one of them
    finalists = len(runner.calls) - TRIALS
    assert finalists in (2, 3)
    assert sorted(len(r.run_secs) for r in database.get_all_tuning_records()) == \
        [3] * (TRIALS - finalists) + [6] * finalists
    # A second run has nothing new to measure, so it measures nothing again.
    again = SpikyRunner()
    _tune(tmp_path, again, GradientBased(remeasure_top_k=2, remeasure_rounds=1))
    assert again.calls == []


def test_remeasure_settings_are_checked():
    with pytest.raises(ValueError, match="remeasure_top_k and remeasure_rounds must be >= 0"):
        RoundRobin(remeasure_top_k=-1)
    with pytest.raises(ValueError, match="remeasure_top_k and remeasure_rounds must be >= 0"):
        GradientBased(remeasure_rounds=-2)


def test_the_default_evaluator_takes_several_short_measurements(tmp_path):
    config = EvaluatorConfig()
    assert config.repeat >= 5 and config.min_repeat_ms <= 5
    database = ms.tune_tir(mod=MyModule, target=TARGET, work_dir=str(tmp_path),
                           max_trials_global=2, num_trials_per_iter=2, seed=0,
                           strategy="replay-trace", runner=LocalRunner(), progress=False)
    # Measured with `repeat` times each, then (both finalists) once per final round.
    rounds = RoundRobin().remeasure_rounds
    assert rounds >= 3  # a median of rounds that one lucky round cannot move
    assert all(len(r.run_secs) == (1 + rounds) * config.repeat
               for r in database.get_all_tuning_records() if r.is_valid)
