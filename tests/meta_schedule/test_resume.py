"""Resume: a second tune_tir on the same work_dir measures only candidates it has not
recorded; a finished run measures nothing. (A run ends with a final comparison of its
best candidates, the database's best and the default kernel, so those are measured
again, in it and in a later run that measured something new.)"""
import pytest

from rvm import meta_schedule as ms
from rvm.meta_schedule.runner import EvaluatorConfig, LocalRunner
from tests.meta_schedule.workloads import MyModule

TARGET = "llvm --num-cores=1"


class CountingRunner(LocalRunner):
    """A LocalRunner that remembers every artifact it measured."""

    def __init__(self):
        super().__init__(evaluator_config=EvaluatorConfig(number=1, repeat=1, min_repeat_ms=0))
        self.measured = []

    def run(self, runner_inputs):
        self.measured.extend(r.source for r in runner_inputs)
        return super().run(runner_inputs)


def _tune(work_dir, runner, trials, strategy="replay-trace"):
    if strategy == "evolutionary":
        strategy = ms.search_strategy.EvolutionarySearch(population_size=12, genetic_num_iters=2)
    return ms.tune_tir(mod=MyModule, target=TARGET, max_trials_global=trials,
                       num_trials_per_iter=3, work_dir=str(work_dir), runner=runner,
                       strategy=strategy, seed=7)


@pytest.mark.slow
def test_a_second_run_measures_only_new_candidates(tmp_path):
    first = CountingRunner()
    database = _tune(tmp_path, first, 3)
    assert len(set(first.measured)) == 3 and len(database) == 3

    again = CountingRunner()
    database = _tune(tmp_path, again, 3)
    assert again.measured == []  # the budget is spent: nothing to do
    assert len(database) == 3

    more = CountingRunner()
    database = _tune(tmp_path, more, 6, strategy="evolutionary")
    assert len(set(more.measured) - set(first.measured)) == 3 and len(database) == 6
    # no candidate is searched twice; the final comparison measures the earlier run's
    # default kernel and best again beside this run's (at most two of them)
    assert len(set(more.measured) & set(first.measured)) <= 2
    hashes = [r.candidate_hash for r in database.get_all_tuning_records()]
    assert len(set(hashes)) == len(hashes) == 6
