"""The lowered module of a candidate schedule, computed once and shared.

The cost model's features and the builder both need a candidate's kernel
lowered (about as costly as replaying its trace). ``lowered_module(sch)``
keeps the result on the Schedule for as long as the schedule is unchanged,
so a candidate scored by the cost model, then built, then used to update the
model is lowered once.
"""
from rvm.tir.transform.pipeline import lower_module

_CACHE_ATTR = "_meta_schedule_lowered"


def lowered_module(sch):
    """``lower_module(sch.mod)``, cached on ``sch`` until a primitive changes it (an error
    lowering the module is raised every time it is asked for)."""
    current = sch.state.mod
    cached = getattr(sch, _CACHE_ATTR, None)
    if cached is not None and cached[0] is current:
        return cached[1]
    lowered = lower_module(sch.mod)
    setattr(sch, _CACHE_ATTR, (current, lowered))
    return lowered
