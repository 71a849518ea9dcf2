"""rvm.meta_schedule.space_generator: the schedules a search explores.

This package is a facade; the definitions live in its modules.
"""
from rvm.meta_schedule.space_generator.post_order_apply import PostOrderApply
from rvm.meta_schedule.space_generator.space_generator import (
    PySpaceGenerator, ScheduleFn, SpaceGenerator, SpaceGeneratorUnion,
)


def create(kind="post-order-apply"):
    """A space generator from what ``tune_tir``'s ``space`` accepts: "post-order-apply" or
    None (the default space), a SpaceGenerator (as it is, or its clone when a tune context
    holds it already: one generator given to several tasks), a function of a Schedule
    (ScheduleFn), or a list of these (their union)."""
    if kind is None or kind == "post-order-apply":
        return PostOrderApply()
    if isinstance(kind, SpaceGenerator):
        return kind if kind.context is None else kind.clone()
    if isinstance(kind, (list, tuple)):
        return SpaceGeneratorUnion([create(k) for k in kind])
    if callable(kind):
        return ScheduleFn(kind)
    raise ValueError(f"unknown space {kind!r}; expected 'post-order-apply', a SpaceGenerator, "
                     "a function of a Schedule or a list of them")


__all__ = ["PostOrderApply", "PySpaceGenerator", "ScheduleFn", "SpaceGenerator",
           "SpaceGeneratorUnion", "create"]
