"""UpdateCostModel: the run's cost model learns from every measured batch."""
from rvm.meta_schedule.measure_callback.measure_callback import MeasureCallback


class UpdateCostModel(MeasureCallback):
    """``cost_model.update`` with the batch (nothing when the run has no cost model)."""

    def apply(self, task_scheduler, task_id, measure_candidates, builder_results,
              runner_results):
        if task_scheduler.cost_model is not None:
            task_scheduler.cost_model.update(task_scheduler.tasks[task_id].context,
                                             measure_candidates, runner_results)
