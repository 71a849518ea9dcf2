"""Shape manipulation operators: permute_dims, reshape, flatten, expand_dims, squeeze,
broadcast_to. Symbolic dimensions are kept (``reshape`` of ``(n, 4)`` to ``(-1,)`` gives
``(n * 4,)``).

>>> from rvm.relax.expr import Var
>>> from rvm.relax.struct_info import TensorStructInfo
>>> permute_dims(Var("x", TensorStructInfo((2, 3), "float32"))).attrs
{'axes': None}
"""
from rvm.ir.expr import RelaxExpr
from rvm.relax.expr import Call, ShapeExpr
from rvm.relax.op.attrs import axes_attr
from rvm.relax.op.infer_util import (
    as_dim,
    attr,
    check_arity,
    dim_value,
    dims_text,
    normalize_axes,
    same_dim,
    tensor_arg,
    with_shape,
)
from rvm.relax.op.registry import REQUIRED, Op, register_op
from rvm.relax.struct_info import ShapeStructInfo, TensorStructInfo
from rvm.tir import op as tir_op
from rvm.tir.expr import IntImm


def _infer_permute_dims(call, ctx):
    name = "relax.permute_dims"
    check_arity(call, 1, name)
    sinfo = tensor_arg(call, 0, name, "x")
    axes = attr(call, "axes")
    if sinfo.ndim == -1:
        return TensorStructInfo(None, sinfo.dtype, -1 if axes is None else len(axes))
    if axes is None:
        axes = list(range(sinfo.ndim))[::-1]
    if len(axes) != sinfo.ndim:
        raise ValueError(f"{name}: expected {sinfo.ndim} axes for a rank-{sinfo.ndim} tensor, "
                         f"got {list(axes)}")
    try:
        axes = normalize_axes(axes, sinfo.ndim, name)
    except ValueError as err:
        if "repeated" not in str(err):
            raise
        raise ValueError(f"{name}: axes {list(axes)} are not a permutation of "
                         f"0..{sinfo.ndim - 1}") from None
    values = sinfo.shape_values
    return with_shape(sinfo, None if values is None else [values[a] for a in axes])


register_op("relax.permute_dims", _infer_permute_dims, description="transpose axes",
            attrs={"axes": None})


def permute_dims(x, axes=None):
    """``x`` with its axes permuted (reversed when ``axes`` is None) (``relax.permute_dims``)."""
    return Call(Op.get("relax.permute_dims"), [x],
                attrs={"axes": axes_attr(axes, "relax.permute_dims", "axes")})


def _product(dims):
    total = IntImm("int64", 1)
    for d in dims:
        total = total * d
    return as_dim(total)


def resolve_new_shape(src, values, name):
    """``values`` (the new shape of a reshape) with its -1 replaced by the dimension that keeps
    the element count of ``src`` (symbolic when ``src`` is); the static counts are checked."""
    values = list(values)
    wildcard = [i for i, d in enumerate(values) if dim_value(d) == -1]
    if len(wildcard) > 1:
        raise ValueError(f"{name}: at most one dimension may be -1, got {dims_text(values)}")
    for d in values:
        if dim_value(d) is not None and dim_value(d) < -1:
            raise ValueError(f"{name}: new dimensions must be >= 0 or -1, got {dims_text(values)}")
    if src is None:
        return values if not wildcard else None
    total = _product(src)
    known = _product(d for i, d in enumerate(values) if i not in wildcard)
    if wildcard:
        # cancel the dimensions kept as they are, so (n, 4) -> (n, -1) gives 4, not n * 4 // n
        rest, divisor = list(src), []
        for i, d in enumerate(values):
            match = next((k for k, r in enumerate(rest) if same_dim(r, d)), None)
            if i in wildcard:
                continue
            if match is None:
                divisor.append(d)
            else:
                rest.pop(match)
        if dim_value(known) == 0:
            raise ValueError(f"{name}: cannot infer -1 in {dims_text(values)}: the other "
                             "dimensions have zero elements")
        if dim_value(total) is not None and dim_value(known) is not None \
                and dim_value(total) % dim_value(known):
            raise ValueError(f"{name}: cannot reshape {dims_text(src)} ({dim_value(total)} "
                             f"elements) into {dims_text(values)}")
        values[wildcard[0]] = as_dim(tir_op.floordiv(_product(rest), _product(divisor)))
    elif dim_value(total) is not None and dim_value(known) is not None \
            and dim_value(total) != dim_value(known):
        raise ValueError(f"{name}: cannot reshape {dims_text(src)} ({dim_value(total)} "
                         f"elements) into {dims_text(values)} ({dim_value(known)} elements)")
    return values


def _tensor_and_shape(call, name):
    """The struct infos of the arguments ``(x, shape)`` of reshape and broadcast_to."""
    check_arity(call, 2, name)
    sinfo = tensor_arg(call, 0, name, "x")
    target = call.args[1].struct_info_
    if not isinstance(target, ShapeStructInfo):
        raise ValueError(f"{name}: argument 'shape' must be a shape value, got {target!r}")
    return sinfo, target


def _infer_reshape(call, ctx):
    name = "relax.reshape"
    sinfo, target = _tensor_and_shape(call, name)
    if target.values is None:
        return TensorStructInfo(call.args[1], sinfo.dtype)
    values = resolve_new_shape(sinfo.shape_values, target.values, name)
    if values is None:
        return TensorStructInfo(None, sinfo.dtype, len(target.values))
    return TensorStructInfo(values, sinfo.dtype)


register_op("relax.reshape", _infer_reshape, description="reshape (one -1 allowed)",
            attrs={})


def reshape(x, shape):
    """``x`` with a new ``shape`` (ints/PrimExprs, one may be -1, or a shape value)
    (``relax.reshape``). As in TVM, a -1 is resolved here when ``x``'s shape is known.

    >>> from rvm.relax.expr import Var
    >>> call = reshape(Var("x", TensorStructInfo((2, 6), "float32")), (3, -1))
    >>> [d.value for d in call.args[1].values]
    [3, 4]
    """
    if not isinstance(shape, RelaxExpr):
        shape = ShapeExpr(shape)
    sinfo = x.struct_info_ if isinstance(x, RelaxExpr) else None
    if isinstance(shape, ShapeExpr) and isinstance(sinfo, TensorStructInfo) and \
            sinfo.shape_values is not None and any(dim_value(d) == -1 for d in shape.values):
        shape = ShapeExpr(resolve_new_shape(sinfo.shape_values, shape.values, "relax.reshape"))
    return Call(Op.get("relax.reshape"), [x, shape])


def _infer_flatten(call, ctx):
    name = "relax.flatten"
    check_arity(call, 1, name)
    sinfo = tensor_arg(call, 0, name, "x")
    values = sinfo.shape_values
    if values is None:
        return TensorStructInfo(None, sinfo.dtype, 1)
    return TensorStructInfo([_product(values)], sinfo.dtype)


register_op("relax.flatten", _infer_flatten, description="flatten to rank 1", attrs={})


def flatten(x):
    """``x`` as a rank-1 tensor (``relax.flatten``)."""
    return Call(Op.get("relax.flatten"), [x])


def _infer_expand_dims(call, ctx):
    name = "relax.expand_dims"
    check_arity(call, 1, name)
    sinfo = tensor_arg(call, 0, name, "x")
    axis = attr(call, "axis")
    if axis is None:
        raise ValueError(f"{name} needs the attribute 'axis'")
    if sinfo.ndim == -1:
        return TensorStructInfo(None, sinfo.dtype)
    out_ndim = sinfo.ndim + len(axis)
    new = normalize_axes(axis, out_ndim, name)
    values = sinfo.shape_values
    if values is None:
        return TensorStructInfo(None, sinfo.dtype, out_ndim)
    rest = iter(values)
    return with_shape(sinfo, [1 if i in new else next(rest) for i in range(out_ndim)])


register_op("relax.expand_dims", _infer_expand_dims, description="insert axes of size 1",
            attrs={"axis": REQUIRED})


def expand_dims(x, axis):
    """``x`` with axes of size 1 inserted at ``axis`` (an int or a list of positions in the
    result) (``relax.expand_dims``)."""
    axis = axes_attr(axis, "relax.expand_dims", "axis")
    if axis is None:
        raise TypeError("relax.expand_dims: 'axis' must be an int or a list of ints, got None")
    return Call(Op.get("relax.expand_dims"), [x], attrs={"axis": axis})


def _infer_squeeze(call, ctx):
    name = "relax.squeeze"
    check_arity(call, 1, name)
    sinfo = tensor_arg(call, 0, name, "x")
    axis = attr(call, "axis")
    if sinfo.ndim == -1:
        return TensorStructInfo(None, sinfo.dtype)
    values = sinfo.shape_values
    if axis is None:
        if values is None or any(dim_value(d) is None for d in values):
            return TensorStructInfo(None, sinfo.dtype)  # which axes are 1 is unknown
        return with_shape(sinfo, [d for d in values if dim_value(d) != 1])
    axes = normalize_axes(axis, sinfo.ndim, name)
    if values is None:
        return TensorStructInfo(None, sinfo.dtype, sinfo.ndim - len(axes))
    for a in axes:
        if dim_value(values[a]) not in (None, 1):
            raise ValueError(f"{name}: axis {a} has size {dim_value(values[a])}, expected 1 "
                             f"(shape {dims_text(values)})")
    return with_shape(sinfo, [d for i, d in enumerate(values) if i not in axes])


register_op("relax.squeeze", _infer_squeeze, description="remove axes of size 1",
            attrs={"axis": None})


def squeeze(x, axis=None):
    """``x`` without the size-1 axes listed in ``axis`` (None: all of them) (``relax.squeeze``)."""
    return Call(Op.get("relax.squeeze"), [x],
                attrs={"axis": axes_attr(axis, "relax.squeeze", "axis")})


def _infer_broadcast_to(call, ctx):
    name = "relax.broadcast_to"
    sinfo, target = _tensor_and_shape(call, name)
    if target.values is None:
        return TensorStructInfo(call.args[1], sinfo.dtype)
    values, src = list(target.values), sinfo.shape_values
    if sinfo.ndim != -1 and sinfo.ndim > len(values):
        raise ValueError(f"{name}: cannot broadcast a rank-{sinfo.ndim} tensor to rank "
                         f"{len(values)} shape {dims_text(values)}")
    if src is not None:
        offset = len(values) - len(src)
        for i, d in enumerate(src):
            old, new = dim_value(d), dim_value(values[offset + i])
            if old not in (None, 1) and new is not None and old != new:
                raise ValueError(f"{name}: cannot broadcast shape {dims_text(src)} to "
                                 f"{dims_text(values)}: dimension {i} is {old}, expected 1 "
                                 f"or {new}")
    return TensorStructInfo(values, sinfo.dtype)


register_op("relax.broadcast_to", _infer_broadcast_to, description="broadcast to a shape",
            attrs={})


def broadcast_to(x, shape):
    """``x`` broadcast (numpy rules) to ``shape`` (``relax.broadcast_to``)."""
    if not isinstance(shape, RelaxExpr):
        shape = ShapeExpr(shape)
    return Call(Op.get("relax.broadcast_to"), [x, shape])
