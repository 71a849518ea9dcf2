"""Measure callbacks: the task scheduler hands every measured batch to them, in order; the
default ones record the batch in the database and teach the cost model."""
import pytest

from rvm import meta_schedule as ms
from rvm.meta_schedule.measure_callback import (
    AddToDatabase, MeasureCallback, PyMeasureCallback, UpdateCostModel, create,
)
from rvm.meta_schedule.runner import Runner, RunnerFuture, RunnerResult
from tests.meta_schedule.workloads import MyModule

TARGET = "llvm --num-cores=1"


class FixedRunner(Runner):
    """Every candidate takes 1 ms (nothing runs)."""

    def run(self, runner_inputs):
        return [RunnerFuture.of(RunnerResult([1e-3], fingerprint="fp")) for _ in runner_inputs]


class Seen(PyMeasureCallback):
    def __init__(self, log):
        self.log = log

    def apply(self, task_scheduler, task_id, measure_candidates, builder_results,
              runner_results):
        self.log.append((type(self).__name__, task_id, len(measure_candidates),
                         len(builder_results), len(runner_results),
                         len(task_scheduler.database)))


class Model(ms.cost_model.RandomModel):
    def __init__(self, log):
        super().__init__()
        self.log = log

    def update(self, context, candidates, results):
        self.log.append(("UpdateCostModel", len(candidates)))


def _tune(tmp_path, callbacks, log):
    return ms.tune_tir(mod=MyModule, target=TARGET, work_dir=str(tmp_path), max_trials_global=4,
                       num_trials_per_iter=2, seed=3, strategy="replay-trace",
                       runner=FixedRunner(), cost_model=Model(log),
                       measure_callbacks=callbacks, progress=False)


def test_callbacks_see_every_batch_in_the_order_given(tmp_path):
    log = []
    database = _tune(tmp_path, [Seen(log), AddToDatabase(), UpdateCostModel(), Seen(log)], log)
    assert len(database) == 4
    # Per batch: the first callback runs before AddToDatabase committed the batch, the last
    # after; UpdateCostModel between them.
    assert log == [("Seen", 0, 2, 2, 2, 0), ("UpdateCostModel", 2), ("Seen", 0, 2, 2, 2, 2),
                   ("Seen", 0, 2, 2, 2, 2), ("UpdateCostModel", 2), ("Seen", 0, 2, 2, 2, 4)]


def test_without_update_cost_model_the_model_learns_nothing(tmp_path):
    log = []
    database = _tune(tmp_path, [AddToDatabase()], log)
    assert len(database) == 4 and log == []


def test_the_default_is_add_to_database_then_update_cost_model():
    assert [type(c) for c in create()] == [AddToDatabase, UpdateCostModel]
    assert [type(c) for c in create(None)] == [AddToDatabase, UpdateCostModel]
    mine = [AddToDatabase()]
    assert create(mine) == mine


@pytest.mark.parametrize("bad", ["all", [AddToDatabase(), "UpdateCostModel"], 3])
def test_anything_else_is_refused_with_what_is_expected(bad):
    with pytest.raises(ValueError, match="expected 'default' or a list of MeasureCallbacks"):
        create(bad)


def test_the_base_class_has_no_behaviour():
    with pytest.raises(NotImplementedError):
        MeasureCallback().apply(None, 0, [], [], [])
