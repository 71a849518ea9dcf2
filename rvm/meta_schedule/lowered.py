"""The lowered module of a candidate schedule, computed once and shared.

The cost model's features and the builder both need a candidate's kernel
lowered (about as costly as replaying its trace). ``lowered_module(sch, layout_free)``
keeps the result for as long as the schedule lives and is unchanged, so a
candidate scored by the cost model, then built, then used to update the
model is lowered once. What is lowered is the kernel as the build runs it: with the
packing of its ``layout_free`` inputs split off (``layout_preproc.measured_module``),
so the features describe what is timed and the builder compiles what it is given.
The cache is this module's: a schedule that is dropped drops its entry.
"""
import weakref

from rvm.meta_schedule.arg_info import entry_prim_func
from rvm.meta_schedule.layout_preproc import measured_module
from rvm.tir.transform.pipeline import lower_module

_LOWERED = weakref.WeakKeyDictionary()  # Schedule -> (its IRModule then, layout_free, lowered)


def lowered_module(sch, layout_free=()):
    """``lower_module`` of ``sch.mod`` as measured (``measured_module(sch.mod["main"],
    layout_free)`` when that splits), cached for ``sch`` until a primitive changes it;
    None when lowering fails (the builder lowers the module again and reports why)."""
    current = sch.state.mod
    key = tuple(int(k) for k in layout_free or ())
    cached = _LOWERED.get(sch)
    if cached is not None and cached[0] is current and cached[1] == key:
        return cached[2]  # a failure is remembered too
    try:
        split = measured_module(entry_prim_func(sch.mod), key)[0] if key else None
        lowered = lower_module(sch.mod if split is None else split)
    except Exception:  # noqa: BLE001  (the builder's error message says what failed)
        lowered = None
    _LOWERED[sch] = (current, key, lowered)
    return lowered
