"""rvm.meta_schedule.runner: measuring candidates (TVM's ``ms.runner``).

This package is a facade; the definitions live in its modules.
"""
from rvm.meta_schedule.runner.local_runner import LocalRunner
from rvm.meta_schedule.runner.ray_runner import RayRunner
from rvm.meta_schedule.runner.runner import (
    EvaluatorConfig, PyRunner, Runner, RunnerFuture, RunnerInput, RunnerResult, create,
)

__all__ = ["EvaluatorConfig", "LocalRunner", "PyRunner", "RayRunner", "Runner", "RunnerFuture",
           "RunnerInput", "RunnerResult", "create"]
