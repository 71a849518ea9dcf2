"""Joining, splitting and repeating along axes: concat, split, tile, repeat.

>>> from rvm.relax.expr import Var
>>> from rvm.relax.struct_info import TensorStructInfo
>>> split(Var("x", TensorStructInfo((6, 2), "float32")), 3).attrs
{'indices_or_sections': 3, 'axis': 0}
"""
from rvm.ir.expr import RelaxExpr
from rvm.relax.expr import Call, Tuple
from rvm.relax.op.attrs import axes_attr, dims_attr, int_attr
from rvm.relax.op.infer_util import (
    as_dim,
    attr,
    check_arity,
    dim_value,
    normalize_axis,
    same_dim,
    tensor_arg,
    unify_dtype,
    with_shape,
)
from rvm.relax.op.registry import REQUIRED, Op, register_op
from rvm.relax.struct_info import TensorStructInfo, TupleStructInfo
from rvm.tir import op as tir_op


def _infer_concat(call, ctx):
    name = "relax.concat"
    check_arity(call, 1, name)
    tup = call.args[0].struct_info_
    if not isinstance(tup, TupleStructInfo) or not tup.fields:
        raise ValueError(f"{name} expects a non-empty tuple of tensors, got {tup!r}")
    fields = []
    for i, f in enumerate(tup.fields):
        if not isinstance(f, TensorStructInfo):
            raise ValueError(f"{name}: element {i} must be a tensor, got {f!r}")
        fields.append(f)
    dtype = fields[0].dtype
    for f in fields[1:]:
        dtype = unify_dtype(dtype, f.dtype, name)
    ndims = {f.ndim for f in fields if f.ndim != -1}
    if len(ndims) > 1:
        raise ValueError(f"{name}: tensors have different ranks {sorted(ndims)}")
    if not ndims:
        return TensorStructInfo(None, dtype)
    ndim = ndims.pop()
    axis = normalize_axis(attr(call, "axis", 0), ndim, name)
    shapes = [f.shape_values for f in fields]
    if any(s is None for s in shapes):
        return TensorStructInfo(None, dtype, ndim)
    out = list(shapes[0])
    for s in shapes[1:]:
        for i in range(ndim):
            if i == axis:
                out[i] = out[i] + s[i]
            elif not same_dim(out[i], s[i]):
                if dim_value(out[i]) is not None and dim_value(s[i]) is not None:
                    raise ValueError(f"{name}: dimension {i} differs, {dim_value(out[i])} vs "
                                     f"{dim_value(s[i])}")
                return TensorStructInfo(None, dtype, ndim)
    return TensorStructInfo([as_dim(d) for d in out], dtype)


register_op("relax.concat", _infer_concat, description="concatenate along an axis",
            attrs={"axis": 0})


def concat(tensors, axis=0):
    """The tensors of ``tensors`` (a tuple) joined along ``axis`` (``relax.concat``)."""
    if not isinstance(tensors, RelaxExpr):
        tensors = Tuple(tensors)
    return Call(Op.get("relax.concat"), [tensors],
                attrs={"axis": int_attr(axis, "relax.concat", "axis")})


def split_dims(length, indices_or_sections, name="relax.split"):
    """The extent of each part when an axis of ``length`` is split at the ascending cut points
    ``indices_or_sections``, or into that many sections of ``ceil(length / sections)`` elements
    (the last gets the rest, as torch.chunk). A constant ``length`` is split as numpy does (cut
    points clamped to the axis); a symbolic one as TVM does, the cut points assumed inside it."""
    if isinstance(indices_or_sections, int):
        step = tir_op.floordiv(length + (indices_or_sections - 1), indices_or_sections)
        points = [as_dim(step * k) for k in range(indices_or_sections)]
    else:
        points = [as_dim(0)] + [as_dim(c) for c in indices_or_sections]
        static = [dim_value(p) for p in points]
        if None not in static and static != sorted(static):
            raise ValueError(f"{name}: the cut points must ascend, got {static[1:]}")
    points.append(length)
    if dim_value(length) is not None:
        points = [tir_op.min(p, length) for p in points]
        return [as_dim(tir_op.max(end - begin, 0)) for begin, end in zip(points, points[1:])]
    return [as_dim(end - begin) for begin, end in zip(points, points[1:])]


def _infer_split(call, ctx):
    name = "relax.split"
    check_arity(call, 1, name)
    sinfo = tensor_arg(call, 0, name, "x")
    spec = attr(call, "indices_or_sections")
    if isinstance(spec, int) and spec <= 0:
        raise ValueError(f"{name}: 'indices_or_sections' as a number of sections must be "
                         f"positive, got {spec}")
    count = spec if isinstance(spec, int) else len(spec) + 1
    if sinfo.ndim == -1:
        return TupleStructInfo([TensorStructInfo(None, sinfo.dtype)] * count)
    axis = normalize_axis(attr(call, "axis", 0), sinfo.ndim, name)
    values = sinfo.shape_values
    if values is None:
        return TupleStructInfo([TensorStructInfo(None, sinfo.dtype, sinfo.ndim)] * count)
    fields = []
    for extent in split_dims(values[axis], spec):
        dims = list(values)
        dims[axis] = extent
        fields.append(with_shape(sinfo, dims))
    return TupleStructInfo(fields)


register_op("relax.split", _infer_split, description="split into a tuple along an axis",
            attrs={"indices_or_sections": REQUIRED, "axis": 0})


def split(x, indices_or_sections, axis=0):
    """``x`` cut along ``axis`` into a tuple: ``indices_or_sections`` is a number of sections
    (``ceil(n / sections)`` elements each, the last maybe fewer) or a list of cut points
    (``relax.split``)."""
    name = "relax.split"
    if isinstance(indices_or_sections, int) and not isinstance(indices_or_sections, bool):
        spec = indices_or_sections
    else:
        spec = dims_attr(indices_or_sections, name, "indices_or_sections")
    return Call(Op.get(name), [x], attrs={"indices_or_sections": spec,
                                          "axis": int_attr(axis, name, "axis")})


def _infer_tile(call, ctx):
    name = "relax.tile"
    check_arity(call, 1, name)
    sinfo = tensor_arg(call, 0, name, "data")
    repeats = list(attr(call, "repeats", ()))
    if any(r < 0 for r in repeats):
        raise ValueError(f"{name}: 'repeats' must be non-negative, got {repeats}")
    if sinfo.ndim == -1:
        return TensorStructInfo(None, sinfo.dtype)
    ndim = max(sinfo.ndim, len(repeats))
    values = sinfo.shape_values
    if values is None:
        return TensorStructInfo(None, sinfo.dtype, ndim)
    values = [1] * (ndim - len(values)) + list(values)
    repeats = [1] * (ndim - len(repeats)) + repeats
    return with_shape(sinfo, [as_dim(d) * r for d, r in zip(values, repeats)])


register_op("relax.tile", _infer_tile, description="repeat the whole tensor along axes",
            attrs={"repeats": REQUIRED})


def tile(data, repeats):
    """``data`` repeated ``repeats[k]`` times along axis k, as numpy.tile (``relax.tile``)."""
    return Call(Op.get("relax.tile"), [data],
                attrs={"repeats": axes_attr(repeats, "relax.tile", "repeats")})


def _infer_repeat(call, ctx):
    name = "relax.repeat"
    check_arity(call, 1, name)
    sinfo = tensor_arg(call, 0, name, "data")
    repeats, axis = attr(call, "repeats"), attr(call, "axis")
    if repeats is None or repeats < 0:
        raise ValueError(f"{name}: 'repeats' must be a non-negative int, got {repeats}")
    values = sinfo.shape_values
    if axis is None:
        if values is None:
            return TensorStructInfo(None, sinfo.dtype, 1)
        total = as_dim(1)
        for d in values:
            total = total * d
        return with_shape(sinfo, [total * repeats])
    if sinfo.ndim == -1:
        return TensorStructInfo(None, sinfo.dtype)
    axis = normalize_axis(axis, sinfo.ndim, name)
    if values is None:
        return sinfo
    dims = list(values)
    dims[axis] = dims[axis] * repeats
    return with_shape(sinfo, dims)


register_op("relax.repeat", _infer_repeat, description="repeat each element along an axis",
            attrs={"repeats": REQUIRED, "axis": None})


def repeat(data, repeats, axis=None):
    """Each element of ``data`` repeated ``repeats`` times along ``axis`` (None: of the
    flattened tensor), as numpy.repeat (``relax.repeat``)."""
    name = "relax.repeat"
    return Call(Op.get(name), [data], attrs={
        "repeats": int_attr(repeats, name, "repeats"),
        "axis": None if axis is None else int_attr(axis, name, "axis")})
