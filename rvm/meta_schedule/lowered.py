"""The lowered module of a candidate schedule, computed once and shared.

The cost model's features and the builder both need a candidate's kernel
lowered (about as costly as replaying its trace). ``lowered_module(sch)``
keeps the result for as long as the schedule lives and is unchanged, so a
candidate scored by the cost model, then built, then used to update the
model is lowered once. The cache is this module's: a schedule that is
dropped drops its entry.
"""
import weakref

from rvm.tir.transform.pipeline import lower_module

_LOWERED = weakref.WeakKeyDictionary()  # Schedule -> (its IRModule then, the lowered one)


def lowered_module(sch):
    """``lower_module(sch.mod)``, cached for ``sch`` until a primitive changes it; None when
    lowering fails (the builder lowers the module again and reports why)."""
    current = sch.state.mod
    cached = _LOWERED.get(sch)
    if cached is not None and cached[0] is current:  # a failure is remembered too
        return cached[1]
    try:
        lowered = lower_module(sch.mod)
    except Exception:  # noqa: BLE001  (the builder's error message says what failed)
        lowered = None
    _LOWERED[sch] = (current, lowered)
    return lowered
