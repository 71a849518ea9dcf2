"""Shape manipulation operators: permute_dims, reshape, flatten, concat.

>>> from rvm.relax.expr import Var
>>> from rvm.relax.struct_info import TensorStructInfo
>>> permute_dims(Var("x", TensorStructInfo((2, 3), "float32"))).attrs
{'axes': None}
"""
import operator

from rvm.ir.expr import RelaxExpr
from rvm.relax.expr import Call, ShapeExpr, Tuple
from rvm.relax.op.infer_util import (
    check_arity,
    dim_value,
    normalize_axis,
    same_dim,
    tensor_arg,
    unify_dtype,
)
from rvm.relax.op.registry import Op, register_op
from rvm.relax.struct_info import ShapeStructInfo, TensorStructInfo, TupleStructInfo
from rvm.tir.expr import IntImm


def _infer_permute_dims(call, ctx):
    name = "relax.permute_dims"
    check_arity(call, 1, name)
    sinfo = tensor_arg(call, 0, name)
    axes = (call.attrs or {}).get("axes")
    if sinfo.ndim == -1:
        return TensorStructInfo(None, sinfo.dtype, -1 if axes is None else len(axes))
    if axes is None:
        axes = list(range(sinfo.ndim))[::-1]
    if len(axes) != sinfo.ndim:
        raise ValueError(f"{name}: expected {sinfo.ndim} axes for a rank-{sinfo.ndim} tensor, "
                         f"got {list(axes)}")
    axes = [normalize_axis(a, sinfo.ndim, name) for a in axes]
    if sorted(axes) != list(range(sinfo.ndim)):
        raise ValueError(f"{name}: axes {list(axes)} are not a permutation of "
                         f"0..{sinfo.ndim - 1}")
    values = sinfo.shape_values
    if values is None:
        return TensorStructInfo(None, sinfo.dtype, sinfo.ndim)
    return TensorStructInfo([values[a] for a in axes], sinfo.dtype)


register_op("relax.permute_dims", _infer_permute_dims, description="transpose axes")


def permute_dims(x, axes=None):
    """``x`` with its axes permuted (reversed when ``axes`` is None) (``relax.permute_dims``)."""
    axes = None if axes is None else tuple(operator.index(a) for a in axes)
    return Call(Op.get("relax.permute_dims"), [x], attrs={"axes": axes})


def _product(dims):
    total = 1
    for d in dims:
        total *= d
    return total


def _infer_reshape(call, ctx):
    name = "relax.reshape"
    check_arity(call, 2, name)
    sinfo = tensor_arg(call, 0, name)
    target = call.args[1].struct_info_
    if not isinstance(target, ShapeStructInfo):
        raise ValueError(f"{name}: the new shape must be a shape value, got {target!r}")
    if target.values is None:
        return TensorStructInfo(call.args[1], sinfo.dtype)
    values = list(target.values)
    wildcard = [i for i, d in enumerate(values) if dim_value(d) == -1]
    if len(wildcard) > 1:
        raise ValueError(f"{name}: at most one dimension may be -1, got "
                         f"{[dim_value(d) for d in values]}")
    src = sinfo.shape_values
    src_static = src is not None and all(dim_value(d) is not None for d in src)
    new_known = [dim_value(d) for i, d in enumerate(values) if i not in wildcard]
    if src_static and all(v is not None for v in new_known):
        total = _product(dim_value(d) for d in src)
        known = _product(new_known)
        if wildcard:
            if known == 0 or total % known:
                raise ValueError(f"{name}: cannot reshape {total} elements into "
                                 f"{[dim_value(d) for d in values]}")
            values[wildcard[0]] = IntImm("int64", total // known)
        elif known != total:
            raise ValueError(f"{name}: cannot reshape {[dim_value(d) for d in src]} "
                             f"({total} elements) into {new_known} ({known} elements)")
    elif wildcard:
        return TensorStructInfo(None, sinfo.dtype, len(values))
    return TensorStructInfo(values, sinfo.dtype)


register_op("relax.reshape", _infer_reshape, description="reshape (one -1 allowed)")


def reshape(x, shape):
    """``x`` with a new ``shape`` (ints/PrimExprs, one may be -1, or a shape value)
    (``relax.reshape``)."""
    if not isinstance(shape, RelaxExpr):
        shape = ShapeExpr(shape)
    return Call(Op.get("relax.reshape"), [x, shape])


def _infer_flatten(call, ctx):
    name = "relax.flatten"
    check_arity(call, 1, name)
    sinfo = tensor_arg(call, 0, name)
    values = sinfo.shape_values
    if values is None:
        return TensorStructInfo(None, sinfo.dtype, 1)
    total = IntImm("int64", 1)
    for d in values:
        total = total * d
    return TensorStructInfo([total], sinfo.dtype)


register_op("relax.flatten", _infer_flatten, description="flatten to rank 1")


def flatten(x):
    """``x`` as a rank-1 tensor (``relax.flatten``)."""
    return Call(Op.get("relax.flatten"), [x])


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
    axis = normalize_axis((call.attrs or {}).get("axis", 0), ndim, name)
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
    return TensorStructInfo(out, dtype)


register_op("relax.concat", _infer_concat, description="concatenate along an axis")


def concat(tensors, axis=0):
    """The tensors of ``tensors`` (a tuple) joined along ``axis`` (``relax.concat``)."""
    if not isinstance(tensors, RelaxExpr):
        tensors = Tuple(tensors)
    return Call(Op.get("relax.concat"), [tensors], attrs={"axis": int(axis)})
