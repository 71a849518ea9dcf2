"""ONNX bit operators on integers, composed of integer arithmetic (rvm's operators have no
bit operations): BitShift, BitwiseAnd/Or/Xor and BitwiseNot.

- ``x << n`` is ``x * 2**n`` computed in the unsigned type of ``x`` (wrapping, so a
  signed shift keeps two's complement bits without signed overflow), 0 when ``n`` is
  negative or at least the bit width; ``x >> n`` is ``floor(x / 2**n)`` (an arithmetic
  shift for signed types), and -1 or 0 by the sign of ``x`` when ``n`` is out of range.
  The powers of two come from a table indexed by the clamped shift.
- And, Or and Xor combine the operands bit by bit: bit ``k`` is
  ``floor(x / 2**k) mod 2`` (the two's complement bit for negative values too) and the
  sign bit of a signed type is ``x < 0``, with weight ``-2**(bits-1)``.
- ``~x`` is ``-1 - x`` for signed types and ``max - x`` for unsigned ones.
"""
import numpy as np

from rvm.relax.frontend.onnx.common import OnnxImportError
from rvm.relax.frontend.onnx.ops_math import scalar
from rvm.relax.frontend.onnx.registry import converter
from rvm.relax.op import binary, index, search, unary
from rvm.runtime.data_type import DataType

_INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def _int_dtype(ctx, x):
    dtype = ctx.dtype(x)
    if dtype not in _INTS:
        raise OnnxImportError(f"{ctx.node.op_type} expects integer tensors, got {dtype}")
    return dtype


def _powers(ctx, exponents, count, dtype):
    """``2**e`` of the int64 tensor ``exponents`` (clamped to ``0..count-1``) as ``dtype``."""
    table = ctx.tensor(np.array([1 << k for k in range(count)],
                                DataType(dtype).numpy_dtype))
    clamped = ctx.emit(unary.clip(exponents, 0, count - 1))
    return ctx.emit(index.take(table, clamped, axis=0))


@converter("BitShift")
def _bit_shift(ctx, inputs, attrs):
    x, n = ctx.tensor(inputs[0]), ctx.tensor(inputs[1])
    dtype = _int_dtype(ctx, x)
    if ctx.dtype(n) != dtype:
        raise OnnxImportError(f"BitShift's operands differ in type: {dtype} and "
                              f"{ctx.dtype(n)}")
    bits, signed = DataType(dtype).bits, not dtype.startswith("u")
    n64 = ctx.emit(unary.astype(n, "int64"))
    zero = scalar(ctx, 0, dtype)
    direction = attrs.get("direction")
    if direction == "LEFT":
        unsigned = f"uint{bits}"
        powers = _powers(ctx, n64, bits, unsigned)
        wide = ctx.emit(unary.astype(x, unsigned)) if signed else x
        shifted = ctx.emit(binary.multiply(wide, powers))
        shifted = ctx.emit(unary.astype(shifted, dtype)) if signed else shifted
        limit, outside = bits, zero
    elif direction == "RIGHT":
        # a signed shift by bits-1 gives the sign like one out of range, and 2**(bits-1)
        # is not a value of the type
        limit = bits - 1 if signed else bits
        shifted = ctx.emit(binary.floor_divide(x, _powers(ctx, n64, limit, dtype)))
        outside = zero
        if signed:
            outside = ctx.emit(search.where(binary.less(x, zero), scalar(ctx, -1, dtype),
                                            zero))
    else:
        raise OnnxImportError(f"BitShift's direction must be LEFT or RIGHT, got {direction!r}")
    out_of_range = ctx.emit(binary.logical_or(
        binary.less(n64, scalar(ctx, 0, "int64")),
        binary.greater_equal(n64, scalar(ctx, limit, "int64"))))
    return ctx.emit(search.where(out_of_range, outside, shifted))


def _bit(ctx, x, k, dtype):
    """Bit ``k`` of ``x`` (0 or 1, of ``dtype``)."""
    two = scalar(ctx, 2, dtype)
    shifted = ctx.emit(binary.floor_divide(x, scalar(ctx, 1 << k, dtype))) if k else x
    return ctx.emit(binary.floor_mod(shifted, two))


_COMBINE = {
    "BitwiseAnd": lambda a, b: binary.multiply(a, b),
    "BitwiseOr": lambda a, b: binary.maximum(a, b),
    "BitwiseXor": lambda a, b: binary.not_equal(a, b),
}


@converter(*_COMBINE)
def _bitwise(ctx, inputs, attrs):
    x, y = ctx.tensor(inputs[0]), ctx.tensor(inputs[1])
    dtype = _int_dtype(ctx, x)
    if ctx.dtype(y) != dtype:
        raise OnnxImportError(f"{ctx.node.op_type}'s operands differ in type: {dtype} and "
                              f"{ctx.dtype(y)}")
    combine = _COMBINE[ctx.node.op_type]
    bits, signed = DataType(dtype).bits, not dtype.startswith("u")
    out = None
    for k in range(bits - 1 if signed else bits):
        bit = ctx.emit(combine(_bit(ctx, x, k, dtype), _bit(ctx, y, k, dtype)))
        if ctx.dtype(bit) != dtype:
            bit = ctx.emit(unary.astype(bit, dtype))
        term = ctx.emit(binary.multiply(bit, scalar(ctx, 1 << k, dtype))) if k else bit
        out = term if out is None else ctx.emit(binary.add(out, term))
    if signed:
        zero = scalar(ctx, 0, dtype)
        sign = ctx.emit(combine(unary.astype(binary.less(x, zero), dtype),
                                unary.astype(binary.less(y, zero), dtype)))
        sign = ctx.emit(binary.not_equal(sign, zero)) if ctx.dtype(sign) != "bool" else sign
        lowest = scalar(ctx, -(1 << (bits - 1)), dtype)
        out = ctx.emit(binary.add(out, search.where(sign, lowest, zero)))
    return out


@converter("BitwiseNot")
def _bitwise_not(ctx, inputs, attrs):
    x = ctx.tensor(inputs[0])
    dtype = _int_dtype(ctx, x)
    top = -1 if not dtype.startswith("u") else int(np.iinfo(DataType(dtype).numpy_dtype).max)
    return ctx.emit(binary.subtract(scalar(ctx, top, dtype), x))
