"""rvm.te: tensor expressions, and their lowering to TensorIR (create_prim_func).

This package is a facade; the definitions live in its modules.
"""
from rvm.te.create_prim_func import create_prim_func
from rvm.te.operation import (
    compute, extern, max, min, placeholder, prod, reduce_axis, size_var, sum, var,
)
from rvm.te.tensor import ComputeOp, ExternOp, Operation, PlaceholderOp, ProducerLoad, Tensor
# Scalar math, as TVM's te namespace offers it.
from rvm.tir.op import (
    abs, all, any, const, div, erf, exp, floordiv, floormod, if_then_else, indexdiv, indexmod,
    log, max_value, min_value, power, sigmoid, sqrt, tanh, truncdiv, truncmod,
)

__all__ = [
    "ComputeOp", "ExternOp", "Operation", "PlaceholderOp", "ProducerLoad", "Tensor", "compute",
    "create_prim_func", "extern", "max", "min", "placeholder", "prod", "reduce_axis",
    "size_var", "sum", "var", "abs", "all", "any", "const", "div", "erf", "exp", "floordiv",
    "floormod", "if_then_else", "indexdiv", "indexmod", "log", "max_value", "min_value", "power",
    "sigmoid", "sqrt", "tanh", "truncdiv", "truncmod",
]
