"""Reductions (sum, prod, mean, max, min, variance, std) over axes, optionally keeping the
reduced axes as size 1, and the scans cumsum and cumprod.

>>> from rvm.relax.expr import Var
>>> from rvm.relax.struct_info import TensorStructInfo
>>> sum(Var("x", TensorStructInfo((2, 3), "float32")), axis=1).attrs
{'axis': (1,), 'keepdims': False}
"""
from rvm.relax.expr import Call
from rvm.relax.op.attrs import axes_attr, bool_attr, dtype_attr, int_attr
from rvm.relax.op.infer_util import (
    as_dim,
    attr,
    check_arity,
    normalize_axes,
    normalize_axis,
    tensor_arg,
    with_shape,
)
from rvm.relax.op.registry import Op, register_op
from rvm.relax.struct_info import TensorStructInfo
from rvm.tir.expr import IntImm


def reduced_sinfo(sinfo, axis, keepdims, op_name, dtype=None):
    """The struct info of reducing ``sinfo`` over ``axis`` (a tuple, or None for all axes)."""
    dtype = sinfo.dtype if dtype is None else dtype
    if sinfo.ndim == -1:
        return TensorStructInfo(None, dtype)
    axes = set(range(sinfo.ndim) if axis is None else normalize_axes(axis, sinfo.ndim, op_name))
    values = sinfo.shape_values
    if values is None:
        return TensorStructInfo(None, dtype, sinfo.ndim if keepdims else sinfo.ndim - len(axes))
    out = []
    for i, d in enumerate(values):
        if i not in axes:
            out.append(d)
        elif keepdims:
            out.append(IntImm("int64", 1))
    return TensorStructInfo(out, dtype)


def _make(name, doc, float_only=False):
    op_name = f"relax.{name}"

    def infer(call, ctx):
        check_arity(call, 1, op_name)
        sinfo = tensor_arg(call, 0, op_name, "x")
        if float_only and sinfo.dtype is not None and not sinfo.dtype.is_float:
            raise ValueError(f"{op_name} expects a float tensor, got {sinfo.dtype}")
        return reduced_sinfo(sinfo, attr(call, "axis"), attr(call, "keepdims"), op_name)

    register_op(op_name, infer, description=doc, attrs={"axis": None, "keepdims": False})

    def build(x, axis=None, keepdims=False):
        return Call(Op.get(op_name), [x], attrs={
            "axis": axes_attr(axis, op_name, "axis"),
            "keepdims": bool_attr(keepdims, op_name, "keepdims")})

    build.__name__ = build.__qualname__ = name
    build.__doc__ = (f"{doc} over ``axis`` (an int, a list, or None for all axes); "
                     f"``keepdims`` keeps them as size 1 (``{op_name}``).")
    return build


sum = _make("sum", "The sum")  # noqa: A001  (TVM's name)
prod = _make("prod", "The product")
mean = _make("mean", "The mean")
max = _make("max", "The maximum")  # noqa: A001  (TVM's name)
min = _make("min", "The minimum")  # noqa: A001  (TVM's name)
variance = _make("variance", "The population variance", float_only=True)
std = _make("std", "The population standard deviation", float_only=True)


def _make_scan(name, doc):
    op_name = f"relax.{name}"

    def infer(call, ctx):
        check_arity(call, 1, op_name)
        sinfo = tensor_arg(call, 0, op_name, "data")
        axis, dtype = attr(call, "axis"), attr(call, "dtype")
        dtype = sinfo.dtype if dtype is None else dtype
        if axis is None:  # the flattened tensor
            values = sinfo.shape_values
            if values is None:
                return TensorStructInfo(None, dtype, 1)
            total = as_dim(1)
            for d in values:
                total = total * d
            return with_shape(sinfo, [total], dtype)
        if sinfo.ndim != -1:
            normalize_axis(axis, sinfo.ndim, op_name)
        if sinfo.shape_values is not None:
            return with_shape(sinfo, list(sinfo.shape_values), dtype)
        return TensorStructInfo(None, dtype, sinfo.ndim)

    register_op(op_name, infer, description=doc,
                attrs={"axis": None, "dtype": None, "exclusive": False})

    def build(data, axis=None, dtype=None, exclusive=None):
        return Call(Op.get(op_name), [data], attrs={
            "axis": None if axis is None else int_attr(axis, op_name, "axis"),
            "dtype": dtype_attr(dtype, op_name),
            "exclusive": bool_attr(False if exclusive is None else exclusive, op_name,
                                   "exclusive")})

    build.__name__ = build.__qualname__ = name
    build.__doc__ = (f"{doc} along ``axis`` (None: of the flattened tensor), accumulated in "
                     f"``dtype`` (default: the data's); ``exclusive`` leaves each element out "
                     f"of its own result (``{op_name}``).")
    return build


cumsum = _make_scan("cumsum", "The cumulative sum")
cumprod = _make_scan("cumprod", "The cumulative product")
