"""Creating tensors: full, full_like, zeros, zeros_like, ones, ones_like, arange.

>>> from rvm.relax.expr import const
>>> call = full((2, 3), const(1.5, "float32"))
>>> call.args[0].values[1].value, call.attrs
(3, {'dtype': None})
"""
from rvm.ir.expr import PrimExpr, RelaxExpr
from rvm.relax.expr import Call, PrimValue, ShapeExpr, const
from rvm.relax.op.attrs import dtype_attr
from rvm.relax.op.infer_util import as_dim, attr, check_arity, tensor_arg
from rvm.relax.op.registry import REQUIRED, Op, register_op
from rvm.relax.struct_info import PrimStructInfo, ShapeStructInfo, TensorStructInfo
from rvm.tir import op as tir_op


def _shape(call, name, index=0):
    sinfo = call.args[index].struct_info_
    if not isinstance(sinfo, ShapeStructInfo):
        raise ValueError(f"{name}: argument 'shape' must be a shape value, got {sinfo!r}")
    return sinfo


def _fill(call, index, name):
    fill = tensor_arg(call, index, name, "fill_value")
    if fill.ndim not in (-1, 0):
        raise ValueError(f"{name}: argument 'fill_value' must be a scalar (0-d) tensor, got "
                         f"rank {fill.ndim}")
    return fill


def _sinfo(shape_expr, shape_sinfo, dtype):
    if shape_sinfo.values is not None:
        return TensorStructInfo(shape_sinfo.values, dtype)
    return TensorStructInfo(shape_expr, dtype)


def _infer_full(call, ctx):
    name = "relax.full"
    check_arity(call, 2, name)
    shape = _shape(call, name)
    fill = _fill(call, 1, name)
    return _sinfo(call.args[0], shape, attr(call, "dtype") or fill.dtype)


def _infer_full_like(call, ctx):
    name = "relax.full_like"
    check_arity(call, 2, name)
    x = tensor_arg(call, 0, name, "x")
    fill = _fill(call, 1, name)
    return TensorStructInfo(x.shape, attr(call, "dtype") or x.dtype or fill.dtype,
                            x.ndim if x.shape is None else -1)


def _infer_constant_fill(name):
    def infer(call, ctx):
        check_arity(call, 1, name)
        dtype = attr(call, "dtype")
        if dtype is None:
            raise ValueError(f"{name} needs the attribute 'dtype'")
        return _sinfo(call.args[0], _shape(call, name), dtype)

    return infer


def _infer_constant_like(name):
    def infer(call, ctx):
        check_arity(call, 1, name)
        x = tensor_arg(call, 0, name, "x")
        return TensorStructInfo(x.shape, attr(call, "dtype") or x.dtype,
                                x.ndim if x.shape is None else -1)

    return infer


for _name in ("zeros", "ones"):
    register_op(f"relax.{_name}", _infer_constant_fill(f"relax.{_name}"),
                description=f"a tensor of {_name}", attrs={"dtype": REQUIRED})
    register_op(f"relax.{_name}_like", _infer_constant_like(f"relax.{_name}_like"),
                description=f"a tensor of {_name} shaped like another", attrs={"dtype": None})
register_op("relax.full", _infer_full, description="a tensor filled with one value",
            attrs={"dtype": None})
register_op("relax.full_like", _infer_full_like,
            description="a tensor filled with one value, shaped like another",
            attrs={"dtype": None})


def _shape_arg(shape):
    return shape if isinstance(shape, RelaxExpr) else ShapeExpr(shape)


def _fill_arg(value, dtype):
    return value if isinstance(value, RelaxExpr) else const(value, dtype)


def full(shape, fill_value, dtype=None):
    """A tensor of ``shape`` filled with ``fill_value`` (a scalar tensor or a number), in
    ``dtype`` (default: the fill value's) (``relax.full``)."""
    dtype = dtype_attr(dtype, "relax.full")
    return Call(Op.get("relax.full"), [_shape_arg(shape), _fill_arg(fill_value, dtype)],
                attrs={"dtype": dtype})


def full_like(x, fill_value, dtype=None):
    """A tensor shaped like ``x`` filled with ``fill_value``, in ``dtype`` (default: x's)
    (``relax.full_like``)."""
    dtype = dtype_attr(dtype, "relax.full_like")
    return Call(Op.get("relax.full_like"), [x, _fill_arg(fill_value, dtype)],
                attrs={"dtype": dtype})


def zeros(shape, dtype):
    """A tensor of zeros (``relax.zeros``)."""
    return Call(Op.get("relax.zeros"), [_shape_arg(shape)],
                attrs={"dtype": dtype_attr(dtype, "relax.zeros")})


def ones(shape, dtype):
    """A tensor of ones (``relax.ones``)."""
    return Call(Op.get("relax.ones"), [_shape_arg(shape)],
                attrs={"dtype": dtype_attr(dtype, "relax.ones")})


def zeros_like(x, dtype=None):
    """Zeros shaped like ``x``, in ``dtype`` (default: x's) (``relax.zeros_like``)."""
    return Call(Op.get("relax.zeros_like"), [x],
                attrs={"dtype": dtype_attr(dtype, "relax.zeros_like")})


def ones_like(x, dtype=None):
    """Ones shaped like ``x``, in ``dtype`` (default: x's) (``relax.ones_like``)."""
    return Call(Op.get("relax.ones_like"), [x],
                attrs={"dtype": dtype_attr(dtype, "relax.ones_like")})


def arange_length(start, end, step):
    """The number of elements of ``arange(start, end, step)`` (PrimExprs or numbers)."""
    values = [getattr(v, "value", v) for v in (start, end, step)]
    if all(isinstance(v, (int, float)) for v in values):
        if values[2] == 0:
            raise ValueError("relax.arange: 'step' must not be 0")
        span = (values[1] - values[0]) / values[2]
        return as_dim(max(int(-(-span // 1)), 0))
    if not isinstance(values[2], int) or values[2] <= 0:
        raise ValueError(f"relax.arange: a symbolic range needs a constant positive integer "
                         f"step, got {step!r}")
    return as_dim(tir_op.max(tir_op.floordiv(end - start + (values[2] - 1), values[2]), 0))


def _infer_arange(call, ctx):
    name = "relax.arange"
    check_arity(call, 3, name)
    bounds = []
    for index, arg in enumerate(("start", "end", "step")):
        sinfo = call.args[index].struct_info_
        if not isinstance(sinfo, PrimStructInfo) or sinfo.value is None:
            raise ValueError(f"{name}: argument '{arg}' must be a known scalar "
                             f"(R.prim_value), got struct info {sinfo!r}")
        bounds.append(sinfo.value)
    dtype = attr(call, "dtype")
    if dtype is None:
        dtype = "float32" if any(b.dtype.is_float for b in bounds) else "int64"
    return TensorStructInfo([arange_length(*bounds)], dtype)


register_op("relax.arange", _infer_arange, description="evenly spaced values in a range",
            attrs={"dtype": None})


def _prim(value, name):
    if isinstance(value, RelaxExpr):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float, PrimExpr)):
        raise TypeError(f"relax.arange: '{name}' must be a number or a PrimExpr, got {value!r}")
    return PrimValue(value)


def arange(start, end=None, step=1, dtype=None):
    """``start, start + step, ...`` up to ``end`` (exclusive), numpy's arange; one bound is the
    end; ``dtype`` defaults to int64 for int bounds, else float32 (``relax.arange``).

    >>> [a.value.value for a in arange(5).args]
    [0, 5, 1]
    """
    if end is None:
        start, end = 0, start
    return Call(Op.get("relax.arange"),
                [_prim(start, "start"), _prim(end, "end"), _prim(step, "step")],
                attrs={"dtype": dtype_attr(dtype, "relax.arange")})

