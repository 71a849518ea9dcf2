"""Indexing operators: take (gather along an axis), gather_elements (torch's gather) and
strided_slice.

>>> from rvm.relax.expr import Var
>>> from rvm.relax.struct_info import TensorStructInfo
>>> x = Var("x", TensorStructInfo((8, 9), "float32"))
>>> strided_slice(x, axes=[0], begin=[1], end=[8], strides=[2]).attrs["end"]
(8,)
"""
from rvm.ir.expr import PrimExpr
from rvm.relax.expr import Call
from rvm.relax.op.attrs import axes_attr, bool_attr, dims_attr, int_attr, str_attr
from rvm.relax.op.infer_util import (
    as_dim,
    attr,
    check_arity,
    normalize_axis,
    tensor_arg,
    with_shape,
)
from rvm.relax.op.registry import REQUIRED, Op, register_op
from rvm.relax.struct_info import TensorStructInfo
from rvm.tir import op as tir_op

TAKE_MODES = ("fast", "clip", "wrap")


def _infer_take(call, ctx):
    name = "relax.take"
    check_arity(call, 2, name)
    data = tensor_arg(call, 0, name, "x")
    indices = tensor_arg(call, 1, name, "indices")
    if indices.dtype is not None and not (indices.dtype.is_int or indices.dtype.is_uint):
        raise ValueError(f"{name}: argument 'indices' must be an integer tensor, got "
                         f"{indices.dtype}")
    axis = attr(call, "axis")
    if axis is None:
        if data.ndim not in (-1, 1):
            raise ValueError(f"{name}: without 'axis', argument 'x' must be 1-D, got rank "
                             f"{data.ndim}")
        axis = 0
    if data.ndim == -1 or indices.ndim == -1:
        return TensorStructInfo(None, data.dtype)
    axis = normalize_axis(axis, data.ndim, name)
    ndim = data.ndim - 1 + indices.ndim
    dv, iv = data.shape_values, indices.shape_values
    if dv is None or iv is None:
        return TensorStructInfo(None, data.dtype, ndim)
    return with_shape(data, list(dv[:axis]) + list(iv) + list(dv[axis + 1:]))


register_op("relax.take", _infer_take, description="gather along an axis",
            attrs={"axis": None, "mode": "fast"})


def take(x, indices, axis=None, mode="fast"):
    """The elements of ``x`` at the integer ``indices`` along ``axis`` (None: ``x`` must be
    1-D). In mode ``"fast"`` a negative index counts from the end (as numpy) and one outside
    ``[-n, n)`` fails the call with an IndexError naming it; ``"clip"`` clamps and
    ``"wrap"`` wraps out-of-range indices (``relax.take``)."""
    name = "relax.take"
    return Call(Op.get(name), [x, indices], attrs={
        "axis": None if axis is None else int_attr(axis, name, "axis"),
        "mode": str_attr(mode, name, "mode", TAKE_MODES)})


def _infer_gather_elements(call, ctx):
    name = "relax.gather_elements"
    check_arity(call, 2, name)
    data = tensor_arg(call, 0, name, "x")
    indices = tensor_arg(call, 1, name, "indices")
    if indices.dtype is not None and not (indices.dtype.is_int or indices.dtype.is_uint):
        raise ValueError(f"{name}: argument 'indices' must be an integer tensor, got "
                         f"{indices.dtype}")
    if -1 not in (data.ndim, indices.ndim) and data.ndim != indices.ndim:
        raise ValueError(f"{name}: argument 'indices' must have the rank of 'x' ({data.ndim}), "
                         f"got rank {indices.ndim}")
    ndim = data.ndim if indices.ndim == -1 else indices.ndim
    if ndim != -1:
        normalize_axis(attr(call, "axis"), ndim, name)
    return TensorStructInfo(indices.shape_values, data.dtype,
                            ndim if indices.shape_values is None else -1)


register_op("relax.gather_elements", _infer_gather_elements,
            description="gather single elements along an axis (torch's gather)",
            attrs={"axis": 0})


def gather_elements(x, indices, axis=0):
    """``out[i] = x[i with i[axis] replaced by indices[i]]``: ``indices`` has ``x``'s rank
    and the result its shape; a negative index counts from the end and one outside
    ``[-n, n)`` fails the call with an IndexError (``relax.gather_elements``, torch's
    ``gather``)."""
    name = "relax.gather_elements"
    return Call(Op.get(name), [x, indices], attrs={"axis": int_attr(axis, name, "axis")})


def slice_dim(dim, begin, end, stride, assume_inbound):
    """The extent of the Python slice ``begin:end:stride`` of an axis of ``dim``: bounds are
    clamped to the axis (unless ``assume_inbound``) and a negative int bound counts from the
    end."""
    def bound(value, low, high):
        if not isinstance(value, PrimExpr):
            value = value + dim if value < 0 else min(value, 1 << 62)
        return value if assume_inbound else tir_op.max(tir_op.min(as_dim(value), high), low)

    if stride > 0:
        span = tir_op.max(bound(end, 0, dim) - bound(begin, 0, dim), 0)
    else:
        span = tir_op.max(bound(begin, -1, dim - 1) - bound(end, -1, dim - 1), 0)
    step = abs(stride)
    return as_dim(span if step == 1 else tir_op.floordiv(span + (step - 1), step))


def _infer_strided_slice(call, ctx):
    name = "relax.strided_slice"
    check_arity(call, 1, name)
    sinfo = tensor_arg(call, 0, name, "x")
    axes, begin, end = attr(call, "axes"), attr(call, "begin"), attr(call, "end")
    strides = attr(call, "strides") or (1,) * len(axes)
    if not len(axes) == len(begin) == len(end) == len(strides):
        raise ValueError(f"{name}: 'axes', 'begin', 'end' and 'strides' must have the same "
                         f"length, got {len(axes)}, {len(begin)}, {len(end)} and {len(strides)}")
    if any(s == 0 for s in strides):
        raise ValueError(f"{name}: 'strides' must not contain 0, got {list(strides)}")
    if sinfo.ndim == -1:
        return TensorStructInfo(None, sinfo.dtype)
    axes = [normalize_axis(a, sinfo.ndim, name) for a in axes]
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: repeated axes in {list(attr(call, 'axes'))}")
    values = sinfo.shape_values
    if values is None:
        return sinfo
    dims = list(values)
    for a, b, e, s in zip(axes, begin, end, strides):
        dims[a] = slice_dim(values[a], b, e, s, attr(call, "assume_inbound", False))
    return with_shape(sinfo, dims)


register_op("relax.strided_slice", _infer_strided_slice, description="strided slice",
            attrs={"axes": REQUIRED, "begin": REQUIRED, "end": REQUIRED, "strides": None,
                   "assume_inbound": False})


def strided_slice(x, axes, begin, end, strides=None, assume_inbound=False):
    """``x[begin:end:strides]`` along ``axes`` (Python slice rules: negative bounds count
    from the end, bounds beyond the axis are clamped unless ``assume_inbound``); bounds may
    be symbolic (``relax.strided_slice``)."""
    name = "relax.strided_slice"
    return Call(Op.get(name), [x], attrs={
        "axes": axes_attr(axes, name, "axes"),
        "begin": dims_attr(begin, name, "begin"),
        "end": dims_attr(end, name, "end"),
        "strides": None if strides is None else axes_attr(strides, name, "strides"),
        "assume_inbound": bool_attr(assume_inbound, name, "assume_inbound")})
