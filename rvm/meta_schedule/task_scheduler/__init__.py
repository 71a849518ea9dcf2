"""rvm.meta_schedule.task_scheduler: the tuning loop over tasks.

This package is a facade; the definitions live in its modules.
"""
from rvm.meta_schedule.task_scheduler.task_scheduler import (
    GradientBased, PyTaskScheduler, RoundRobin, TaskScheduler, create,
)

__all__ = ["GradientBased", "PyTaskScheduler", "RoundRobin", "TaskScheduler", "create"]
