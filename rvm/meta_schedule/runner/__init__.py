"""rvm.meta_schedule.runner: measuring candidates (TVM's ``ms.runner``).

This package is a facade; the definitions live in its modules.
"""
from rvm.distributed.ray_runner import RayRunner
from rvm.meta_schedule.runner.local_runner import LocalRunner
from rvm.meta_schedule.runner.runner import (
    EvaluatorConfig, PyRunner, Runner, RunnerFuture, RunnerInput, RunnerResult,
)


def create(kind="local", *args, **kwargs):
    """A runner by kind: "local" (``LocalRunner(*args, **kwargs)``), "ray"
    (``RayRunner(*args, **kwargs)``), or a Runner as it is."""
    if isinstance(kind, Runner):
        return kind
    if kind == "local":
        return LocalRunner(*args, **kwargs)
    if kind == "ray":
        return RayRunner(*args, **kwargs)
    raise ValueError(f"unknown runner {kind!r}; expected 'local', 'ray' or a Runner")


__all__ = ["EvaluatorConfig", "LocalRunner", "PyRunner", "RayRunner", "Runner", "RunnerFuture",
           "RunnerInput", "RunnerResult", "create"]
