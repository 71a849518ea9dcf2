"""rvm.topi: ready-made tensor-expression operators (compute definitions).

This package is a facade; the definitions live in its modules.
"""
from rvm.topi import nn, tag
from rvm.topi.broadcast import (
    add, broadcast_shape, divide, equal, floor_divide, floor_mod, greater, greater_equal, less,
    less_equal, logical_and, logical_or, logical_xor, maximum, minimum, mod, multiply, not_equal,
    power, subtract, where,
)
from rvm.topi.creation import arange, full, full_like
from rvm.topi.elemwise import (
    abs, acos, acosh, asin, asinh, atan, atanh, cast, ceil, clip, cos, cosh, erf, exp, floor,
    identity, isfinite, isinf, isnan, log, logical_not, negative, round, rsqrt, sigmoid, sign,
    sin, sinh, sqrt, square, tan, tanh,
)
from rvm.topi.index import strided_slice, take
from rvm.topi.join import concatenate, repeat, split, tile
from rvm.topi.matmul import matmul
from rvm.topi.reduction import argmax, argmin, max, mean, min, prod, std, sum, variance
from rvm.topi.scan import cumprod, cumsum
from rvm.topi.transform import broadcast_to, expand_dims, reshape, squeeze, transpose

__all__ = [
    "abs", "acos", "acosh", "add", "arange", "argmax", "argmin", "asin", "asinh", "atan", "atanh",
    "broadcast_shape", "broadcast_to", "cast", "ceil", "clip", "concatenate", "cos", "cosh",
    "cumprod", "cumsum", "divide", "equal", "erf", "exp", "expand_dims", "floor", "floor_divide",
    "floor_mod", "full", "full_like", "greater", "greater_equal", "identity", "isfinite", "isinf",
    "isnan", "less", "less_equal", "log", "logical_and", "logical_not", "logical_or",
    "logical_xor", "matmul", "max", "maximum", "mean", "min", "minimum", "mod", "multiply",
    "negative", "nn", "not_equal", "power", "prod", "repeat", "reshape", "round", "rsqrt",
    "sigmoid", "sign", "sin", "sinh", "split", "sqrt", "square", "squeeze", "std",
    "strided_slice", "subtract", "sum", "take", "tan", "tanh", "tile", "transpose", "variance",
    "where",
]
