"""Scatters and gather_nd: scatter_elements (ONNX's ScatterElements, torch's scatter),
scatter_nd (ONNX's ScatterND) and gather_nd (ONNX's GatherND).

A scatter copies the data, then writes the updates in order (a later update of the
same element wins, or combines with ``reduction`` add, mul, max or min) in one
sequential loop nest. An index is read from the end when negative, and one outside
``[-n, n)`` fails the kernel with an IndexError, as in ``take``'s "fast" mode; every
access stays inside its tensor whatever the indices.

>>> from rvm.te.operation import placeholder
>>> d = placeholder((4, 3), name="d")
>>> i = placeholder((2, 3), "int64", name="i")
>>> [s.value for s in scatter_elements(d, i, placeholder((2, 3), name="u")).shape]
[4, 3]
"""
from rvm.tir import op as _op
from rvm.tir.expr import Var
from rvm.tir.stmt import BufferStore, For, stmt_seq
from rvm.te.operation import compute, extern
from rvm.topi.index import _index_in
from rvm.topi.utils import axis_names, named, normalize_axis

REDUCTIONS = ("none", "add", "mul", "max", "min")


def _combine(reduction):
    return {"none": lambda old, new: new, "add": _op.add, "mul": _op.multiply,
            "max": _op.max, "min": _op.min}[reduction]


def _loops(shape, prefix, make):
    """``make(loop vars)`` inside serial loops over ``shape``."""
    names = [Var(f"{prefix}{k}", dim.dtype) for k, dim in enumerate(shape)]
    stmt = make(names)
    for var, dim in reversed(list(zip(names, shape))):
        stmt = For(var, _op.const(0, var.dtype), dim, "serial", stmt)
    return stmt


def _at(index, dim, op_name, axis):
    return _op.cast(_index_in(index, dim, "fast", (op_name, f"along axis {axis}")), dim.dtype)


def _check_reduction(reduction, what):
    if reduction not in REDUCTIONS:
        raise ValueError(f"{what}: reduction must be one of {REDUCTIONS}, got {reduction!r}")


def scatter_elements(data, indices, updates, axis=0, reduction="none"):
    """``data`` with ``out[u with u[axis] replaced by indices[u]] = updates[u]`` for every
    position ``u`` of ``indices`` (and ``updates``, of the same shape), in order."""
    _check_reduction(reduction, "scatter_elements")
    ndim = len(data.shape)
    if len(indices.shape) != ndim or len(updates.shape) != ndim:
        raise ValueError(f"scatter_elements: indices and updates must have the rank of the "
                         f"data ({ndim}), got {len(indices.shape)} and {len(updates.shape)}")
    axis = normalize_axis(axis, ndim, "scatter_elements")
    combine = _combine(reduction)

    def body(ins, outs):
        src, idx, upd = ins
        out = outs[0]
        copy = _loops(data.shape, "i", lambda i: BufferStore(out, src.vload(i), i))

        def write(u):
            target = list(u)
            target[axis] = _at(idx.vload(u), data.shape[axis], "scatter_elements", axis)
            return BufferStore(out, combine(out.vload(target), upd.vload(u)), target)

        return stmt_seq(copy, _loops(indices.shape, "u", write))

    return extern(data.shape, [data, indices, updates], body, name="T_scatter_elements",
                  dtype=data.dtype)


def scatter_nd(data, indices, updates, reduction="none"):
    """``data`` with ``out[indices[u]] = updates[u]`` for every position ``u`` of
    ``indices.shape[:-1]``: ``indices[u]`` addresses the first ``indices.shape[-1]``
    axes, and ``updates[u]`` is the slice of the remaining ones."""
    _check_reduction(reduction, "scatter_nd")
    depth = indices.shape[-1]
    if not isinstance(getattr(depth, "value", None), int):
        raise ValueError("scatter_nd: the last axis of indices must be static")
    depth = depth.value
    if depth > len(data.shape):
        raise ValueError(f"scatter_nd: indices address {depth} axes of data of rank "
                         f"{len(data.shape)}")
    outer, rest = list(indices.shape[:-1]), list(data.shape[depth:])
    if len(updates.shape) != len(outer) + len(rest):
        raise ValueError(f"scatter_nd: updates must have rank {len(outer) + len(rest)}, got "
                         f"{len(updates.shape)}")
    combine = _combine(reduction)

    def body(ins, outs):
        src, idx, upd = ins
        out = outs[0]
        copy = _loops(data.shape, "i", lambda i: BufferStore(out, src.vload(i), i))

        def write(u):
            def inner(r):
                dims = data.shape
                target = [_at(idx.vload(list(u) + [_op.const(j, "int64")]), dims[j],
                              "scatter_nd", j) for j in range(depth)] + list(r)
                return BufferStore(out, combine(out.vload(target), upd.vload(list(u) +
                                                                            list(r))), target)

            return _loops(rest, "r", inner)

        return stmt_seq(copy, _loops(outer, "u", write))

    return extern(data.shape, [data, indices, updates], body, name="T_scatter_nd",
                  dtype=data.dtype)


def gather_nd(data, indices, batch_dims=0):
    """``out[b, u, r] = data[b, indices[b, u], r]``: the first ``batch_dims`` axes are
    shared, ``indices[b, u]`` addresses the next ``indices.shape[-1]`` axes of ``data``
    and ``r`` runs over the remaining ones (ONNX's GatherND)."""
    depth = indices.shape[-1]
    if not isinstance(getattr(depth, "value", None), int):
        raise ValueError("gather_nd: the last axis of indices must be static")
    depth = depth.value
    if batch_dims + depth > len(data.shape):
        raise ValueError(f"gather_nd: {batch_dims} batch axes and indices of depth {depth} "
                         f"address more than the {len(data.shape)} axes of the data")
    outer = list(indices.shape[:-1])
    rest = list(data.shape[batch_dims + depth:])
    shape = outer + rest

    def fcompute(*i):
        u, r = list(i[:len(outer)]), list(i[len(outer):])
        where = [_at(indices[tuple(u + [_op.const(j, "int64")])], data.shape[batch_dims + j],
                     "gather_nd", batch_dims + j) for j in range(depth)]
        return data[tuple(u[:batch_dims] + where + r)]

    return compute(shape, named(fcompute, axis_names("ax", len(shape))), name="T_gather_nd")
