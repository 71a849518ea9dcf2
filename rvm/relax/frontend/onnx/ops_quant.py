"""ONNX quantization operators: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv.

They compute as onnx's reference does, with integer arithmetic where it has it: the
products of MatMulInteger, ConvInteger and the QLinear operators are int32 matmuls and
convolutions of the inputs minus their zero points (never a float fallback), and a
QLinear operator requantizes its int32 result in float64 (``acc * (a_scale * b_scale /
y_scale) + y_zero_point``, the multiplier in the scales' type, as numpy promotes it),
rounding halves to even and saturating to the output type. QuantizeLinear rounds ``x /
y_scale`` to nearest even, adds the zero point and saturates; to a float8 or float4 type
it casts (float8 saturating unless ``saturate=0``). Scales and zero points are per
tensor (a scalar or one element), per axis (1-D along ``axis``) or blocked
(``block_size``: each element covers ``block_size`` consecutive entries along
``axis``); all of them may be graph inputs fed at run time.
"""
from rvm.relax.frontend.onnx.common import OnnxImportError
from rvm.relax.frontend.onnx.ops_cast import SATURATED
from rvm.relax.frontend.onnx.ops_math import scalar
from rvm.relax.frontend.onnx.ops_shape import cast, cast_dtype, normalize_axis
from rvm.relax.frontend.onnx.registry import CONVERTERS, converter
from rvm.relax.op import (
    binary, index, join, linear_algebra, manipulate, search, statistical, unary,
)
from rvm.runtime.data_type import DataType

#: The integer types a value may be quantized to, with their ranges.
INTEGER_RANGES = {"uint8": (0, 255), "int8": (-128, 127), "uint16": (0, 65535),
                  "int16": (-32768, 32767), "uint4": (0, 15), "int4": (-8, 7),
                  "uint2": (0, 3), "int2": (-2, 1)}
#: The float types QuantizeLinear casts to (after ``x / y_scale``, plus the zero point).
FLOAT_TARGETS = ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
                 "float4_e2m1fn")
#: The element types of the 8-bit operands of the integer operators.
EIGHT_BIT = ("uint8", "int8")


def _input(inputs, k):
    return inputs[k] if len(inputs) > k else None


def _static_dims(ctx, value, what):
    dims = ctx.shape(value)
    if not all(isinstance(d, int) for d in dims):
        raise OnnxImportError(f"{what} must have a static shape, got {dims}")
    return dims


def per_axis(ctx, param, x, axis, block_size, what):
    """The scale or zero point ``param`` shaped to broadcast against ``x``: a scalar or a
    one-element tensor as a scalar, a 1-D tensor along ``axis``, or (``block_size`` > 0)
    a tensor of ``x``'s rank, each element repeated over ``block_size`` entries of
    ``axis``."""
    param = ctx.tensor(param)
    dims = _static_dims(ctx, param, what)
    ndim = ctx.ndim(x)
    size = 1
    for d in dims:
        size *= d
    if size == 1:
        return ctx.emit(manipulate.reshape(param, ())) if dims else param
    axis = normalize_axis(axis, ndim)
    extent = ctx.shape(x)[axis]
    if block_size:
        if block_size < 0:
            raise OnnxImportError(f"block_size must be positive, got {block_size}")
        if len(dims) != ndim:
            raise OnnxImportError(f"blocked {what} must have the rank of the input ({ndim}), "
                                  f"got shape {dims}")
        out = ctx.emit(join.repeat(param, block_size, axis=axis))
        return ctx.emit(index.strided_slice(out, [axis], [0], [extent]))
    if len(dims) != 1:
        raise OnnxImportError(f"{what} must be a scalar or 1-D (per axis), got shape {dims}")
    if isinstance(extent, int) and extent != size:
        raise OnnxImportError(f"{what} has {size} elements, expected {extent} (the size of "
                              f"axis {axis} of the input)")
    shape = [1] * ndim
    shape[axis] = size
    return ctx.emit(manipulate.reshape(param, shape))


def saturate(ctx, value, dtype):
    """The float ``value`` clipped to the range of the integer ``dtype`` and cast to it."""
    lo, hi = INTEGER_RANGES[dtype]
    return cast(ctx, ctx.emit(unary.clip(value, lo, hi)), dtype)


def _quantized_dtype(ctx, zero_point, attrs):
    output = attrs.get("output_dtype", 0)
    dtype = ctx.dtype(zero_point) if zero_point is not None else "uint8"
    if output:
        wanted = cast_dtype(output)
        if zero_point is not None and wanted != dtype:
            raise OnnxImportError(f"output_dtype {wanted} differs from the zero point's type "
                                  f"{dtype}")
        dtype = wanted
    if dtype not in INTEGER_RANGES and dtype not in FLOAT_TARGETS:
        raise OnnxImportError(f"cannot quantize to {dtype}; expected one of "
                              f"{', '.join(list(INTEGER_RANGES) + list(FLOAT_TARGETS))}")
    return dtype


@converter("QuantizeLinear")
def _quantize_linear(ctx, inputs, attrs):
    x = ctx.tensor(inputs[0])
    zero_point = _input(inputs, 2)
    dtype = _quantized_dtype(ctx, zero_point, attrs)
    axis, block = attrs.get("axis", 1), attrs.get("block_size", 0)
    scale = per_axis(ctx, inputs[1], x, axis, block, "y_scale")
    precision = attrs.get("precision", 0)
    if precision:
        wide = cast_dtype(precision)
        x, scale = cast(ctx, x, wide), cast(ctx, scale, wide)
    scaled = cast(ctx, ctx.emit(binary.divide(x, cast(ctx, scale, ctx.dtype(x)))), "float32")
    zp = None
    if zero_point is not None:
        zp = cast(ctx, per_axis(ctx, zero_point, x, axis, block, "y_zero_point"), "float32")
    if dtype in FLOAT_TARGETS:
        if zp is not None and dtype == "float4_e2m1fn":
            scaled = ctx.emit(binary.add(scaled, zp))
        if dtype in SATURATED and attrs.get("saturate", 1):
            top = SATURATED[dtype]
            scaled = ctx.emit(unary.clip(scaled, -top, top))
        return cast(ctx, scaled, dtype)
    rounded = ctx.emit(unary.round(scaled))
    if zp is not None:
        rounded = ctx.emit(binary.add(rounded, zp))
    return saturate(ctx, rounded, dtype)


@converter("DequantizeLinear")
def _dequantize_linear(ctx, inputs, attrs):
    x = ctx.tensor(inputs[0])
    axis, block = attrs.get("axis", 1), attrs.get("block_size", 0)
    scale = per_axis(ctx, inputs[1], x, axis, block, "x_scale")
    out_dtype = cast_dtype(attrs["output_dtype"]) if attrs.get("output_dtype") else \
        ctx.dtype(scale)
    wide = cast(ctx, x, "float32")
    zero_point = _input(inputs, 2)
    if zero_point is not None and not DataType(ctx.dtype(x)).is_float:
        if ctx.dtype(zero_point) != ctx.dtype(x):
            raise OnnxImportError(f"x_zero_point has type {ctx.dtype(zero_point)}, expected "
                                  f"the type of x, {ctx.dtype(x)}")
        zp = per_axis(ctx, zero_point, x, axis, block, "x_zero_point")
        wide = ctx.emit(binary.subtract(wide, cast(ctx, zp, "float32")))
    return cast(ctx, ctx.emit(binary.multiply(wide, cast(ctx, scale, "float32"))), out_dtype)


@converter("DynamicQuantizeLinear")
def _dynamic_quantize_linear(ctx, inputs, attrs):
    x = ctx.tensor(inputs[0])
    dtype = ctx.dtype(x)
    wide = cast(ctx, x, "float32")
    zero = scalar(ctx, 0, "float32")
    top = ctx.emit(binary.maximum(ctx.emit(statistical.max(wide)), zero))
    bottom = ctx.emit(binary.minimum(ctx.emit(statistical.min(wide)), zero))
    span = ctx.emit(binary.subtract(top, bottom))
    empty = ctx.emit(binary.equal(span, zero))
    span = ctx.emit(search.where(empty, scalar(ctx, 1, "float32"), span))
    scale = ctx.emit(binary.divide(span, scalar(ctx, 255, "float32")))
    zp = ctx.emit(binary.subtract(zero, ctx.emit(binary.divide(bottom, scale))))
    zp = ctx.emit(unary.round(ctx.emit(unary.clip(zp, 0, 255))))
    y = ctx.emit(binary.add(ctx.emit(unary.round(ctx.emit(binary.divide(wide, scale)))), zp))
    return [saturate(ctx, y, "uint8"), cast(ctx, scale, dtype), saturate(ctx, zp, "uint8")]


def _centered(ctx, value, zero_point, what, row_axis=None):
    """``value`` as int32 minus its zero point (none: ``value``); a 1-D zero point of more
    than one element lies along ``row_axis`` of ``value`` (counted from the end; None: it
    broadcasts along the last axis)."""
    if ctx.dtype(value) not in EIGHT_BIT:
        raise OnnxImportError(f"{what} must be uint8 or int8, got {ctx.dtype(value)}")
    out = cast(ctx, ctx.tensor(value), "int32")
    if zero_point is None:
        return out
    if ctx.dtype(zero_point) != ctx.dtype(value):
        raise OnnxImportError(f"the zero point of {what} has type {ctx.dtype(zero_point)}, "
                              f"expected {ctx.dtype(value)}")
    zp = _broadcast_param(ctx, zero_point, value, row_axis, f"the zero point of {what}")
    return ctx.emit(binary.subtract(out, cast(ctx, zp, "int32")))


def _broadcast_param(ctx, param, value, row_axis, what):
    """A per-tensor or per-row/column ``param`` of ``value`` shaped to broadcast."""
    param = ctx.tensor(param)
    dims = _static_dims(ctx, param, what)
    if len(dims) == 1 and dims[0] > 1 and row_axis is not None:
        return per_axis(ctx, param, value, ctx.ndim(value) + row_axis, 0, what)
    if dims and all(d == 1 for d in dims):
        return ctx.emit(manipulate.reshape(param, ()))
    return param


def _integer_matmul(ctx, a, a_zero_point, b, b_zero_point):
    lhs = _centered(ctx, a, a_zero_point, "A", row_axis=-2 if ctx.ndim(a) >= 2 else None)
    rhs = _centered(ctx, b, b_zero_point, "B")
    return ctx.emit(linear_algebra.matmul(lhs, rhs, out_dtype="int32"))


@converter("MatMulInteger")
def _matmul_integer(ctx, inputs, attrs):
    return _integer_matmul(ctx, inputs[0], _input(inputs, 2), inputs[1], _input(inputs, 3))


def _integer_conv(ctx, x, x_zero_point, w, w_zero_point, attrs):
    if x_zero_point is not None:
        dims = _static_dims(ctx, ctx.tensor(x_zero_point), "x_zero_point")
        if any(d != 1 for d in dims):
            raise OnnxImportError(f"x_zero_point must be a scalar (per tensor), got shape {dims}")
    lhs = _centered(ctx, x, x_zero_point, "x")
    rhs = _centered(ctx, w, w_zero_point, "w", row_axis=-ctx.ndim(w))
    return CONVERTERS["Conv"](ctx, [lhs, rhs], attrs)


@converter("ConvInteger")
def _conv_integer(ctx, inputs, attrs):
    return _integer_conv(ctx, inputs[0], _input(inputs, 2), inputs[1], _input(inputs, 3),
                         attrs)


def _requantize(ctx, acc, scales, y_scale, y_zero_point, dtype):
    """The int32 ``acc`` times ``prod(scales) / y_scale`` (computed in the scales' type),
    in float64, plus the zero point, rounded and saturated to ``dtype``."""
    scale_dtype = ctx.dtype(scales[0])
    multiplier = cast(ctx, scales[0], scale_dtype)
    for other in scales[1:]:
        multiplier = ctx.emit(binary.multiply(multiplier, cast(ctx, other, scale_dtype)))
    multiplier = ctx.emit(binary.divide(multiplier, cast(ctx, y_scale, scale_dtype)))
    out = ctx.emit(binary.multiply(cast(ctx, acc, "float64"), cast(ctx, multiplier, "float64")))
    if y_zero_point is not None:
        out = ctx.emit(binary.add(out, cast(ctx, y_zero_point, "float64")))
    return saturate(ctx, ctx.emit(unary.round(out)), dtype)


def _out_dtype(ctx, y_zero_point, fallback):
    dtype = ctx.dtype(y_zero_point) if y_zero_point is not None else ctx.dtype(fallback)
    if dtype not in EIGHT_BIT:
        raise OnnxImportError(f"the output type must be uint8 or int8, got {dtype}")
    return dtype


@converter("QLinearMatMul")
def _qlinear_matmul(ctx, inputs, attrs):
    a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp = (list(inputs) + [None] * 8)[:8]
    acc = _integer_matmul(ctx, a, a_zp, b, b_zp)
    a = ctx.tensor(a)
    a_row = -2 if ctx.ndim(a) >= 2 else None
    scales = [_broadcast_param(ctx, a_scale, a, a_row, "a_scale"),
              _broadcast_param(ctx, b_scale, ctx.tensor(b), None, "b_scale")]
    y_scale = _broadcast_param(ctx, y_scale, acc, None, "y_scale")
    if y_zp is not None:
        y_zp = _broadcast_param(ctx, y_zp, acc, None, "y_zero_point")
    return _requantize(ctx, acc, scales, y_scale, y_zp, _out_dtype(ctx, y_zp, a))


@converter("QLinearConv")
def _qlinear_conv(ctx, inputs, attrs):
    x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp = (list(inputs) + [None] * 8)[:8]
    bias = _input(inputs, 8)
    acc = _integer_conv(ctx, x, x_zp, w, w_zp, attrs)
    if bias is not None:
        if ctx.dtype(bias) != "int32":
            raise OnnxImportError(f"the bias B must be int32, got {ctx.dtype(bias)}")
        shape = [1, -1] + [1] * (ctx.ndim(acc) - 2)
        acc = ctx.emit(binary.add(acc, ctx.emit(manipulate.reshape(ctx.tensor(bias), shape))))
    w_scale = _broadcast_param(ctx, w_scale, acc, -(ctx.ndim(acc) - 1), "w_scale")
    scales = [_broadcast_param(ctx, x_scale, acc, None, "x_scale"), w_scale]
    y_scale = _broadcast_param(ctx, y_scale, acc, None, "y_scale")
    if y_zp is not None:
        y_zp = _broadcast_param(ctx, y_zp, acc, None, "y_zero_point")
    return _requantize(ctx, acc, scales, y_scale, y_zp, _out_dtype(ctx, y_zp, x))
