"""rvm.meta_schedule.builder: compiling candidates (TVM's ``ms.builder``).

This package is a facade; the definitions live in its modules.
"""
from rvm.meta_schedule.builder.builder import (
    Builder, BuilderInput, BuilderResult, PyBuilder, create,
)
from rvm.meta_schedule.builder.local_builder import LocalBuilder

__all__ = ["Builder", "BuilderInput", "BuilderResult", "LocalBuilder", "PyBuilder", "create"]
