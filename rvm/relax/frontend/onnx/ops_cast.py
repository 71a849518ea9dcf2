"""Cast and CastLike, with the ``saturate`` and ``round_mode`` attributes of opset 19+.

A cast converts as ``relax.op.astype`` does (round to nearest even; a value past a
float8 type's range becomes its infinity or NaN). ``saturate`` (the default) clamps
values past the range of FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2 and FLOAT8E5M2FNUZ
to the largest finite value first, infinities included, NaN kept. A cast to
FLOAT8E8M0 (powers of two) rounds the exponent of the float32 value as ``round_mode``
says ("up", the default, "down" or "nearest"), ignoring the sign, as onnx's
reference does; ``saturate`` then keeps the largest exponent from overflowing to NaN.
A node whose input is a shape value known at import (``registry.is_shape_value``)
folds with numpy and ml_dtypes.
"""
import numpy as np

from rvm.relax.frontend.onnx.common import OnnxImportError
from rvm.relax.frontend.onnx.ops_shape import cast, cast_dtype
from rvm.relax.frontend.onnx.registry import converter, fold
from rvm.relax.op import binary, search, unary
from rvm.runtime.data_type import DataType

#: The largest finite value of the float8 types ``saturate`` clamps to.
SATURATED = {"float8_e4m3fn": 448.0, "float8_e4m3fnuz": 240.0, "float8_e5m2": 57344.0,
             "float8_e5m2fnuz": 57344.0}
ROUND_MODES = ("up", "down", "nearest")
E8M0 = "float8_e8m0fnu"


def _convert(ctx, value, dtype, attrs):
    saturate = bool(attrs.get("saturate", 1))
    if dtype == E8M0 and ctx.dtype(value) != E8M0:
        mode = attrs.get("round_mode", "up")
        if mode not in ROUND_MODES:
            raise OnnxImportError(f"Cast to FLOAT8E8M0: round_mode {mode!r} is not one of "
                                  f"{', '.join(ROUND_MODES)}")
        return _to_e8m0(ctx, value, mode, saturate)
    if saturate and dtype in SATURATED and DataType(ctx.dtype(value)).is_float:
        value = _clamp(ctx, value, SATURATED[dtype])
    return cast(ctx, value, dtype)


@converter("Cast")
def _cast(ctx, inputs, attrs):
    return _convert(ctx, inputs[0], cast_dtype(attrs["to"]), attrs)


@converter("CastLike")
def _cast_like(ctx, inputs, attrs):
    return _convert(ctx, inputs[0], ctx.dtype(inputs[1]), attrs)


fold("Cast")(_cast)
fold("CastLike")(_cast_like)


def _clamp(ctx, x, top):
    """``x`` with values past ``top`` in magnitude (infinities too) set to ``+-top``; NaN
    stays NaN (comparisons with NaN are false)."""
    if isinstance(x, np.ndarray):
        with np.errstate(invalid="ignore"):
            return np.where(x > top, top, np.where(x < -top, -top, x)).astype(x.dtype)
    dtype = ctx.dtype(x)
    hi, lo = (ctx.tensor(np.array(v, DataType(dtype).numpy_dtype)) for v in (top, -top))
    x = ctx.emit(search.where(ctx.emit(binary.greater(x, hi)), hi, x))
    return ctx.emit(search.where(ctx.emit(binary.less(x, lo)), lo, x))


def _to_e8m0(ctx, x, mode, saturate):
    """FLOAT8E8M0 of ``x``: 2 ** e for the float32 exponent e of |x| rounded by ``mode``
    (float32 subnormals have exponent field 0, as onnx's reference reads the bits)."""
    if isinstance(x, np.ndarray):
        return _e8m0_numpy(x, mode, saturate)
    x = ctx.emit(unary.astype(x, "float32")) if ctx.dtype(x) != "float32" else x
    a = ctx.emit(unary.astype(ctx.emit(unary.abs(x)), "float64"))

    def const(v):
        return ctx.tensor(np.array(v, np.float64))

    def where(cond, yes, no):
        return ctx.emit(search.where(cond, yes, no))

    def exp2(e):
        return ctx.emit(binary.power(const(2.0), e))

    # e = floor(log2(a)) made exact by comparing with the powers of two either side
    e = ctx.emit(unary.floor(ctx.emit(binary.divide(ctx.emit(unary.log(a)),
                                                     const(np.log(2.0))))))
    p = exp2(e)
    e = where(ctx.emit(binary.greater(p, a)), ctx.emit(binary.subtract(e, const(1.0))), e)
    p = exp2(e)
    e = where(ctx.emit(binary.less_equal(ctx.emit(binary.multiply(p, const(2.0))), a)),
              ctx.emit(binary.add(e, const(1.0))), e)
    p = exp2(e)
    subnormal = ctx.emit(binary.less(a, const(2.0 ** -126)))
    if mode == "up":
        up = ctx.emit(binary.greater(a, p))
        up_sub = ctx.emit(binary.greater(a, const(0.0)))
    elif mode == "nearest":
        up = ctx.emit(binary.greater_equal(a, ctx.emit(binary.multiply(p, const(1.5)))))
        up_sub = ctx.emit(binary.greater(a, const(2.0 ** -127)))
    else:
        up = up_sub = None
    if up is not None:
        e = where(up, ctx.emit(binary.add(e, const(1.0))), e)
        e = where(subnormal, where(up_sub, const(-126.0), const(-127.0)), e)
        if saturate:
            e = ctx.emit(binary.minimum(e, const(127.0)))
    else:
        e = where(subnormal, const(-127.0), e)
    out = exp2(e)  # 2 ** 128 (an overflow) and NaN become NaN in the cast
    finite = ctx.emit(unary.isfinite(x))
    out = where(finite, out, ctx.tensor(np.array(np.nan, np.float64)))
    return ctx.emit(unary.astype(ctx.emit(unary.astype(out, "float32")), E8M0))


def _e8m0_numpy(x, mode, saturate):
    from onnx import numpy_helper  # the value came from an onnx model

    return numpy_helper.to_float8e8m0(np.asarray(x, np.float32), saturate, mode).astype(
        DataType(E8M0).numpy_dtype)
