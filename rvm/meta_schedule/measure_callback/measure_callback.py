"""Measure callbacks: ``apply(task_scheduler, task_id, measure_candidates, builder_results,
runner_results)`` runs after every measured batch, in the order the callbacks were given,
with the run's ``task_scheduler.database`` and ``.cost_model``; a build failure arrives as a
RunnerResult whose ``error_msg`` is the builder's."""


class MeasureCallback:
    """Base class of measure callbacks."""

    def apply(self, task_scheduler, task_id, measure_candidates, builder_results,
              runner_results):
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}()"


class PyMeasureCallback(MeasureCallback):
    """A measure callback written in Python by subclassing."""
