"""rvm.relax.op: Relax operators (``relax.op.add``, ``relax.op.nn.relu``...).

This package is a facade; the definitions live in its modules. Each
operator is an ``Op`` registered with its struct info inference; the
functions here build Calls of them.
"""
from rvm.relax.op import nn
from rvm.relax.op.base import call_dps_packed, call_packed, call_pure_packed, call_tir
from rvm.relax.op.binary import (
    add, divide, equal, floor_divide, greater, greater_equal, less, less_equal, maximum, minimum,
    multiply, not_equal, power, subtract,
)
from rvm.relax.op.linear_algebra import matmul
from rvm.relax.op.memory import (
    alloc_storage, alloc_tensor, alloc_tensor_in_storage, call_builtin_with_ctx, kill_storage,
    kill_tensor, null_value, shape_of,
)
from rvm.relax.op.manipulate import concat, flatten, permute_dims, reshape
from rvm.relax.op.registry import Op, list_op_names, register_op
from rvm.relax.op.statistical import max, mean, min, sum
from rvm.relax.op.unary import abs, astype, exp, log, negative, rsqrt, sigmoid, sqrt, tanh

__all__ = [
    "Op", "abs", "add", "alloc_storage", "alloc_tensor", "alloc_tensor_in_storage", "astype",
    "call_builtin_with_ctx", "kill_storage", "kill_tensor", "null_value", "shape_of", "call_dps_packed", "call_packed", "call_pure_packed",
    "call_tir", "concat", "divide", "equal", "exp", "flatten", "floor_divide", "greater",
    "greater_equal", "less", "less_equal", "list_op_names", "log", "matmul", "max", "maximum",
    "mean", "min", "minimum", "multiply", "negative", "nn", "not_equal", "permute_dims", "power",
    "register_op", "reshape", "rsqrt", "sigmoid", "sqrt", "subtract", "sum", "tanh",
]
