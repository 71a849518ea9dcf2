"""rvm.relax.op: Relax operators (``relax.op.add``, ``relax.op.nn.relu``...).

This package is a facade; the definitions live in its modules. Each
operator is an ``Op`` registered with its struct info inference; the
functions here build Calls of them.
"""
from rvm.relax.op import builtin, nn, vm
from rvm.relax.op.base import (
    call_dps_packed, call_packed, call_pure_packed, call_tir, call_tir_inplace, invoke_closure,
    invoke_pure_closure, make_closure,
)
from rvm.relax.op.debug import assert_op, print  # noqa: A004  (TVM's relax.op.print)
from rvm.relax.op.create import (
    arange, full, full_like, ones, ones_like, zeros, zeros_like,
)
from rvm.relax.op.binary import (
    add, divide, equal, floor_divide, floor_mod, greater, greater_equal, less, less_equal,
    logical_and, logical_or, logical_xor, maximum, minimum, mod, multiply, not_equal, power,
    subtract,
)
from rvm.relax.op.index import gather_elements, strided_slice, take
from rvm.relax.op.join import concat, repeat, split, tile
from rvm.relax.op.linear_algebra import linear, matmul
from rvm.relax.op.manipulate import (
    broadcast_to, expand_dims, flatten, permute_dims, reshape, squeeze,
)
from rvm.relax.op.memory import (
    alloc_storage, alloc_tensor, alloc_tensor_in_storage, call_builtin_with_ctx, kill_storage,
    kill_tensor, null_value, shape_of,
)
from rvm.relax.op.registry import Op, list_op_names, register_op
from rvm.relax.op.scatter import gather_nd, scatter_elements, scatter_nd
from rvm.relax.op.search import argmax, argmin, where
from rvm.relax.op.statistical import (
    cumprod, cumsum, max, mean, min, prod, std, sum, variance,
)
from rvm.relax.op.unary import (
    abs, acos, acosh, asin, asinh, astype, atan, atanh, ceil, clip, cos, cosh, erf, exp, floor,
    isfinite, isinf, isnan, log, logical_not, negative, round, rsqrt, sigmoid, sign, sin, sinh,
    sqrt, square, tan, tanh,
)

__all__ = [
    "abs", "acos", "acosh", "add", "alloc_storage", "assert_op", "builtin", "alloc_tensor", "alloc_tensor_in_storage",
    "arange", "argmax", "argmin", "asin", "asinh", "astype", "atan", "atanh", "broadcast_to",
    "call_builtin_with_ctx", "call_dps_packed", "call_packed", "call_pure_packed", "call_tir",
    "call_tir_inplace", "invoke_closure", "invoke_pure_closure", "make_closure", "print", "vm",
    "ceil", "clip", "concat", "cos", "cosh", "cumprod", "cumsum", "divide", "equal", "erf", "exp",
    "expand_dims", "flatten", "floor", "floor_divide", "floor_mod", "full", "full_like",
    "gather_elements", "gather_nd", "scatter_elements", "scatter_nd",
    "greater", "greater_equal", "isfinite", "isinf", "isnan", "kill_storage", "kill_tensor",
    "less", "less_equal", "linear", "list_op_names", "log", "logical_and", "logical_not",
    "logical_or", "logical_xor", "matmul", "max", "maximum", "mean", "min", "minimum", "mod",
    "multiply", "negative", "nn", "not_equal", "null_value", "ones", "ones_like", "Op",
    "permute_dims", "power", "prod", "register_op", "repeat", "reshape", "round", "rsqrt",
    "shape_of", "sigmoid", "sign", "sin", "sinh", "split", "sqrt", "square", "squeeze", "std",
    "strided_slice", "subtract", "sum", "take", "tan", "tanh", "tile", "variance", "where",
    "zeros", "zeros_like",
]
