"""Measuring a kernel as the build runs it: the packing of its constant inputs done once.

A schedule may copy an input into a packed layout in a nest marked
``meta_schedule.layout_rewrite_preproc`` (``rvm.dlight.cpu.pack``). When that input is
a constant at every call (a bound weight: ``layout_free`` positions of the task), the
build takes the nest out of the kernel and packs the constant once
(``relax.transform.SplitLayoutRewritePreproc``), so a call runs only the compute.
The tuner must time the same thing, or a kernel that packs a weight is measured
slower than it runs and loses to candidates that do not pack.

``measured_module(func, layout_free)`` splits the kernel the same way
(``split_kernel``, the build's own analysis): "main" is the compute kernel, taking
each packed buffer in its input's place, and ``PREPROC`` is a kernel doing the
packing (inputs then packed buffers). The runner calls ``PREPROC`` once on the random
inputs and times "main" alone (``runner/evaluate.py``).
"""
from rvm.dlight.cpu.pack import LAYOUT_FREE
from rvm.ir.module import IRModule
from rvm.relax.transform.split_layout_rewrite_preproc import split_kernel
from rvm.tir.expr import Var
from rvm.tir.function import PrimFunc
from rvm.tir.stmt import SeqStmt, stmt_seq

PREPROC = "main_layout_preproc"


def mark_layout_free(func, layout_free):
    """``func`` with ``layout_free_buffers`` set to ``layout_free`` (or as it is when empty)."""
    marked = [int(k) for k in layout_free or ()]
    return func.with_attr(LAYOUT_FREE, marked) if marked else func


def _children(realize):
    body = realize.block.body
    return list(body.seq) if isinstance(body, SeqStmt) else [body]


def measured_module(func, layout_free):
    """(module, packs) of ``func`` measured as the build runs it: module {"main": compute,
    PREPROC: packing} and packs [(input position, packed shape, dtype)], or (None, [])
    when no packing of a ``layout_free`` input is hoisted."""
    if not layout_free:
        return None, []
    compute, found = split_kernel(mark_layout_free(func, layout_free),
                                  [int(k) for k in layout_free])
    if not found:
        return None, []
    kept = _children(compute.body)
    nests = [c for c in _children(func.body) if not any(c is k for k in kept)]
    params, buffer_map, packs = [], {}, []
    for pre in found:
        source = func.params[pre.position]
        packed = Var(pre.packed.name, "handle")
        params += [source, packed]
        buffer_map[source] = func.buffer_map[source]
        buffer_map[packed] = pre.packed
        packs.append((pre.position, [int(d) for d in pre.packed.shape], str(pre.packed.dtype)))
    root = func.body.block.with_fields(body=stmt_seq(*nests), alloc_buffers=())
    attrs = {k: v for k, v in func.attrs.items() if k != LAYOUT_FREE}
    attrs["global_symbol"] = PREPROC
    preproc = PrimFunc(params, func.body.with_fields(block=root), func.ret_type, buffer_map,
                       attrs, func.span)
    return IRModule({"main": compute, PREPROC: preproc}), packs
