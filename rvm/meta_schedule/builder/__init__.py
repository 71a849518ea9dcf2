"""rvm.meta_schedule.builder: compiling candidates (TVM's ``ms.builder``).

This package is a facade; the definitions live in its modules.
"""
from rvm.meta_schedule.builder.builder import (
    Builder, BuilderInput, BuilderResult, BuildFuture, PyBuilder,
)
from rvm.meta_schedule.builder.local_builder import LocalBuilder


def create(kind="local", *args, **kwargs):
    """A builder by kind: "local" (``LocalBuilder(*args, **kwargs)``), or a Builder as it is."""
    if isinstance(kind, Builder):
        return kind
    if kind == "local":
        return LocalBuilder(*args, **kwargs)
    raise ValueError(f"unknown builder {kind!r}; expected 'local' or a Builder")


__all__ = ["BuildFuture", "Builder", "BuilderInput", "BuilderResult", "LocalBuilder", "PyBuilder",
           "create"]
