"""rvm.meta_schedule.mutator: changes to one decision of a trace.

This package is a facade; the definitions live in its modules.
"""
from rvm.meta_schedule.mutator.mutate_tile_size import MutateTileSize
from rvm.meta_schedule.mutator.mutator import (
    MutateComputeLocation, MutateParallel, MutateUnroll, Mutator, PyMutator,
)

__all__ = ["MutateComputeLocation", "MutateParallel", "MutateTileSize", "MutateUnroll",
           "Mutator", "PyMutator"]
