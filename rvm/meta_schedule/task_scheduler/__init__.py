"""rvm.meta_schedule.task_scheduler: the tuning loop over tasks.

This package is a facade; the definitions live in its modules.
"""
from rvm.meta_schedule.task_scheduler.gradient_based import GradientBased
from rvm.meta_schedule.task_scheduler.round_robin import RoundRobin
from rvm.meta_schedule.task_scheduler.task_scheduler import PyTaskScheduler, TaskScheduler


def create(kind="gradient", *args, **kwargs):
    """A task scheduler by kind: "gradient" (GradientBased), "round-robin" (RoundRobin), or a
    TaskScheduler as it is."""
    if isinstance(kind, TaskScheduler):
        return kind
    if kind == "gradient":
        return GradientBased(*args, **kwargs)
    if kind == "round-robin":
        return RoundRobin(*args, **kwargs)
    raise ValueError(f"unknown task scheduler {kind!r}; expected 'gradient', 'round-robin' "
                     "or a TaskScheduler")


__all__ = ["GradientBased", "PyTaskScheduler", "RoundRobin", "TaskScheduler", "create"]
