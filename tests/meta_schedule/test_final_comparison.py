"""The tuned build is never slower than the default: the search ranks candidates by their
fastest time, which a kernel that is fast only now and then wins by luck, so each task
ends with a final comparison of its best candidates and its default kernel in
alternating rounds, and the database ranks those finalists by their median round."""
import pytest

from rvm import meta_schedule as ms
from rvm.ir.base import structural_hash
from rvm.meta_schedule.database import JSONDatabase, MemoryDatabase, TuningRecord
from rvm.meta_schedule.task_scheduler import RoundRobin
from tests.meta_schedule.fakes import NoCompiler, TimesRunner
from tests.meta_schedule.workloads import MyModule

TARGET = "llvm --num-cores=1"
DEFAULT, UNSCHEDULED = 0, 1  # the order of the first batch


def _tune(work_dir, runner, top_k=2, trials=8):
    return ms.tune_tir(mod=MyModule, target=TARGET, work_dir=str(work_dir),
                       max_trials_global=trials, num_trials_per_iter=3, seed=3,
                       strategy="replay-trace", builder=NoCompiler(), runner=runner,
                       task_scheduler=RoundRobin(remeasure_top_k=top_k, stop_after_trials=0),
                       progress=False)


def _chosen(database, runner):
    """The measuring index of the kernel the database would build."""
    (best,) = database.get_top_k(database.workloads[0], 1)
    return runner.order[str(structural_hash(best.as_schedule().mod))]


def lucky(n, index, seen):
    """The default takes 1 ms every time, the unscheduled kernel 5 ms; every other
    kernel 1.5 ms, except in its first two measurements (its first and, for a finalist,
    its first final round), where one repeat is lucky at 0.5 ms."""
    if index == DEFAULT:
        return [1e-3] * 3
    if index == UNSCHEDULED:
        return [5e-3] * 3
    return [1.5e-3, 0.5e-3 if seen < 2 else 1.5e-3, 1.5e-3]


def test_a_lucky_kernel_does_not_displace_the_default(tmp_path):
    runner = TimesRunner(lucky)
    database = _tune(tmp_path / "compared", runner)
    assert _chosen(database, runner) == DEFAULT
    # the default was a finalist (it was not among the two fastest by its own measurement)
    assert runner.calls.count(runner.calls[0]) == 1 + RoundRobin().remeasure_rounds
    # the choice is kept in the work_dir
    assert _chosen(JSONDatabase(work_dir=str(tmp_path / "compared")), runner) == DEFAULT

    # Ranked by the fastest time alone, a lucky kernel is chosen.
    plain = TimesRunner(lucky)
    assert _chosen(_tune(tmp_path / "plain", plain, top_k=0), plain) not in (DEFAULT,
                                                                             UNSCHEDULED)


def test_a_kernel_faster_in_the_typical_round_is_chosen(tmp_path):
    def faster(n, index, seen):
        if index == DEFAULT:
            return [1e-3] * 3
        return [(0.8e-3 if index == 4 else 1.2e-3)] * 3  # the fourth kernel measured wins

    runner = TimesRunner(faster)
    assert _chosen(_tune(tmp_path, runner), runner) == 4


def test_a_resumed_run_compares_again_with_the_earlier_default_and_best(tmp_path):
    first = TimesRunner(lucky)
    _tune(tmp_path, first, trials=5)
    # nothing new to measure: nothing is compared again
    idle = TimesRunner(lucky)
    _tune(tmp_path, idle, trials=5)
    assert idle.calls == []
    # more trials: the default kernel (measured by the first run) is built and measured
    # again in this run's comparison, and stays the choice
    second = TimesRunner(lucky)
    database = _tune(tmp_path, second, trials=11)
    default_source = first.calls[0]
    assert second.calls.count(default_source) == RoundRobin().remeasure_rounds
    (best,) = database.get_top_k(database.workloads[0], 1)
    assert str(structural_hash(best.as_schedule().mod)) == default_source


def test_finalists_rank_first_by_their_median_round():
    db = MemoryDatabase()
    workload = db.commit_workload(MyModule)
    steady = TuningRecord([[], []], workload, [1e-3] * 3, fingerprint="fp", candidate_hash=1)
    noisy = TuningRecord([[], []], workload, [0.5e-3, 2e-3], fingerprint="fp",
                         candidate_hash=2)
    other = TuningRecord([[], []], workload, [0.7e-3], fingerprint="fp", candidate_hash=3)
    for record in (steady, noisy, other):
        db.commit_tuning_record(record)
    assert db.get_top_k(workload, 3) == [noisy, other, steady]
    db.commit_final_comparison(workload, {steady: [1e-3, 1e-3, 1e-3],
                                          noisy: [0.5e-3, 2e-3, 2e-3]})
    assert db.get_top_k(workload, 3) == [steady, noisy, other]
    # a later comparison replaces the earlier one
    db.commit_final_comparison(workload, {noisy: [0.9e-3] * 3, other: [0.95e-3] * 3})
    assert steady.final_secs is None
    assert db.get_top_k(workload, 3) == [noisy, other, steady]
    stranger = TuningRecord([[], []], db.commit_workload(MyModule), [1e-3], candidate_hash=4)
    with pytest.raises(ValueError, match="a finalist is not a record of this workload"):
        db.commit_final_comparison(workload, {stranger: [1e-3]})
