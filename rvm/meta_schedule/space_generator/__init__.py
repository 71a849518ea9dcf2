"""rvm.meta_schedule.space_generator: the schedules a search explores.

This package is a facade; the definitions live in its modules.
"""
from rvm.meta_schedule.space_generator.post_order_apply import PostOrderApply
from rvm.meta_schedule.space_generator.space_generator import (
    PySpaceGenerator, ScheduleFn, SpaceGenerator, SpaceGeneratorUnion, create,
)

__all__ = ["PostOrderApply", "PySpaceGenerator", "ScheduleFn", "SpaceGenerator",
           "SpaceGeneratorUnion", "create"]
