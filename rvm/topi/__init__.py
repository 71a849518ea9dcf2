"""rvm.topi: ready-made tensor-expression operators (compute definitions).

This package is a facade; the definitions live in its modules.
"""
from rvm.topi import nn
from rvm.topi.broadcast import (
    add, broadcast_shape, divide, floor_divide, maximum, minimum, multiply, power, subtract,
)
from rvm.topi.elemwise import abs, cast, erf, exp, log, negative, sigmoid, sqrt, tanh
from rvm.topi.matmul import matmul
from rvm.topi.reduction import max, mean, min, sum
from rvm.topi.transform import reshape, transpose

__all__ = [
    "abs", "add", "broadcast_shape", "cast", "divide", "erf", "exp", "floor_divide", "log",
    "matmul", "max", "maximum", "mean", "min", "minimum", "multiply", "negative", "nn", "power",
    "reshape", "sigmoid", "sqrt", "subtract", "sum", "tanh", "transpose",
]
