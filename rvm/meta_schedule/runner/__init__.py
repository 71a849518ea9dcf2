"""rvm.meta_schedule.runner: measuring candidates (TVM's ``ms.runner``).

Measuring on a Ray cluster is ``rvm.distributed.RayRunner``, a Runner like these.

This package is a facade; the definitions live in its modules.
"""
from rvm.meta_schedule.runner.local_runner import LocalRunner
from rvm.meta_schedule.runner.runner import (
    EvaluatorConfig, PyRunner, Runner, RunnerFuture, RunnerInput, RunnerResult,
)


def create(kind="local", *args, **kwargs):
    """A runner by kind: "local" (``LocalRunner(*args, **kwargs)``), or a Runner as it is
    (``rvm.distributed.RayRunner(...)`` measures on Ray)."""
    if isinstance(kind, Runner):
        return kind
    if kind == "local":
        return LocalRunner(*args, **kwargs)
    raise ValueError(f"unknown runner {kind!r}; expected 'local' or a Runner (on Ray: "
                     "rvm.distributed.RayRunner)")


__all__ = ["EvaluatorConfig", "LocalRunner", "PyRunner", "Runner", "RunnerFuture",
           "RunnerInput", "RunnerResult", "create"]
