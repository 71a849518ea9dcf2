"""rvm.meta_schedule.mutator: changes to one decision of a trace.

This package is a facade; the definitions live in its modules.
"""
from rvm.meta_schedule.mutator.mutate_compute_location import MutateComputeLocation
from rvm.meta_schedule.mutator.mutate_parallel import MutateParallel
from rvm.meta_schedule.mutator.mutate_tile_size import MutateTileSize
from rvm.meta_schedule.mutator.mutate_unroll import MutateUnroll
from rvm.meta_schedule.mutator.mutator import Mutator, PyMutator

__all__ = ["MutateComputeLocation", "MutateParallel", "MutateTileSize", "MutateUnroll",
           "Mutator", "PyMutator"]
