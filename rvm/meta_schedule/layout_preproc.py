"""Measuring a kernel as the build runs it: the packing of its constant inputs done once.

A schedule may copy an input into a packed layout in a nest marked
``meta_schedule.layout_rewrite_preproc`` (``rvm.dlight.cpu.pack``). When that input is
a constant at every call (a bound weight: ``layout_free`` positions of the task), the
build takes the nest out of the kernel and packs the constant once, in numpy
(``relax.transform.SplitLayoutRewritePreproc``: its ``split_kernel`` and
``Preproc.apply``), so a call runs only the compute. The tuner must time the same
thing, or a kernel that packs a weight is measured slower than it runs and loses to
candidates that do not pack.

``measured_module(func, layout_free)`` splits the kernel with the build's own analysis:
{"main": the compute kernel}, taking each packed buffer in its input's place, and the
``Preproc`` of each packed input. Only the compute kernel is lowered and compiled; the
runner packs the random inputs with ``Preproc.apply`` (numpy, as the build packs its
constants) and times "main" alone (``runner/evaluate.py``). A Preproc pickles, so it
travels in the job a runner's worker gets (local or on Ray).

The split of a kernel is kept for as long as the kernel lives: the candidate lowered
for the cost model's features and the builder share it (``lowered.py``).
"""
import weakref

from rvm.dlight.cpu.pack import LAYOUT_FREE
from rvm.ir.module import IRModule
from rvm.relax.transform.split_layout_rewrite_preproc import split_kernel

_SPLIT = weakref.WeakKeyDictionary()  # PrimFunc -> (layout_free, (module or None, preprocs))


def mark_layout_free(func, layout_free):
    """``func`` with ``layout_free_buffers`` set to ``layout_free`` (or as it is when empty)."""
    marked = [int(k) for k in layout_free or ()]
    return func.with_attr(LAYOUT_FREE, marked) if marked else func


def unmark_layout_free(func):
    """(``func`` without its ``layout_free_buffers`` attribute, the positions it listed):
    how a kernel given to ``tune_tir`` says which of its inputs are constants at every
    call (TVM's attribute), split into the workload and the task's ``layout_free``."""
    marked = func.get_attr(LAYOUT_FREE)
    if marked is None:
        return func, []
    values = [getattr(k, "value", k) for k in marked] if isinstance(marked, (list, tuple)) \
        else None
    if values is None or not all(isinstance(k, int) and not isinstance(k, bool)
                                 for k in values):
        raise ValueError(f"layout_free_buffers must list parameter positions (integers), "
                         f"got {marked!r}")
    positions = sorted(set(values))
    if any(not 0 <= k < len(func.params) for k in positions):
        raise ValueError(f"layout_free_buffers lists parameter positions {positions}, but the "
                         f"kernel has {len(func.params)} parameters")
    attrs = {k: v for k, v in func.attrs.items() if k != LAYOUT_FREE}
    return func.with_fields(attrs=attrs), positions


def measured_module(func, layout_free):
    """(module, preprocs) of ``func`` measured as the build runs it: module {"main": the
    compute kernel} and the ``Preproc`` of each packed input, or
    (None, []) when no packing of a ``layout_free`` input is hoisted."""
    key = tuple(int(k) for k in layout_free or ())
    if not key:
        return None, []
    cached = _SPLIT.get(func)
    if cached is not None and cached[0] == key:
        return cached[1]
    compute, found = split_kernel(mark_layout_free(func, key), list(key))
    if found:
        attrs = {k: v for k, v in compute.attrs.items() if k != LAYOUT_FREE}
        result = (IRModule({"main": compute.with_fields(attrs=attrs)}), list(found))
    else:
        result = (None, [])
    _SPLIT[func] = (key, result)
    return result
