"""TIR operators: constants, dtype matching, folded arithmetic and intrinsic calls.

These are the Python operators on TIR expressions (this module attaches them to
PrimExprWithOp). Like TVM's, they convert Python scalars to constants of the other
operand's dtype, promote mismatched dtypes, and fold constants (``x + 0 -> x``, ``2 * 3 -> 6``).
"""
import builtins
import math

import numpy as np

from rvm.ir.expr import PrimExpr
from rvm.runtime.data_type import DataType
from rvm.tir import expr as _e
from rvm.tir.expr import (  # noqa: F401  (TVM's tir.op names)
    PrimExprWithOp, cast, const, const_value, convert, is_convertible, match_dtypes,
)


def _fold(dtype, value):
    if DataType(dtype).is_bool:
        return _e.IntImm(dtype, bool(value))
    return const(value, dtype)


def _is_int(dtype):
    return dtype.is_int or dtype.is_uint


def add(a, b):
    """a + b, folded."""
    a, b = match_dtypes(a, b)
    va, vb = const_value(a), const_value(b)
    if va is not None and vb is not None:
        return _fold(a.dtype, va + vb)
    if va == 0:
        return b
    if vb == 0:
        return a
    return _e.Add(a, b)


def subtract(a, b):
    """a - b, folded."""
    a, b = match_dtypes(a, b)
    va, vb = const_value(a), const_value(b)
    if va is not None and vb is not None:
        return _fold(a.dtype, va - vb)
    if vb == 0:
        return a
    return _e.Sub(a, b)


def multiply(a, b):
    """a * b, folded (``x * 1 -> x``, integer ``x * 0 -> 0``)."""
    a, b = match_dtypes(a, b)
    va, vb = const_value(a), const_value(b)
    if va is not None and vb is not None:
        return _fold(a.dtype, va * vb)
    if va == 1:
        return b
    if vb == 1:
        return a
    if _is_int(a.dtype) and (va == 0 or vb == 0):
        return const(0, a.dtype)
    return _e.Mul(a, b)


def _check_divisor(vb, what):
    if vb == 0:
        raise ZeroDivisionError(f"{what} by the constant zero")


def div(a, b):
    """a / b: real division on floats, truncating division on integers."""
    a, b = match_dtypes(a, b)
    va, vb = const_value(a), const_value(b)
    if vb is not None:
        _check_divisor(vb, "division")
    if va is not None and vb is not None:
        if a.dtype.is_float:
            return _fold(a.dtype, va / vb)
        return _fold(a.dtype, _trunc_div(va, vb))
    if vb == 1:
        return a
    return _e.Div(a, b)


truncdiv = div


def _trunc_div(x, y):
    q = builtins.abs(x) // builtins.abs(y)
    return q if (x >= 0) == (y >= 0) else -q


def truncmod(a, b):
    """a % b with the sign of a (C semantics)."""
    a, b = match_dtypes(a, b)
    va, vb = const_value(a), const_value(b)
    if vb is not None:
        _check_divisor(vb, "modulo")
    if va is not None and vb is not None:
        return _fold(a.dtype, va - _trunc_div(va, vb) * vb)
    return _e.Mod(a, b)


def floordiv(a, b):
    """floor(a / b), folded (``x // 1 -> x``)."""
    a, b = match_dtypes(a, b)
    va, vb = const_value(a), const_value(b)
    if vb is not None:
        _check_divisor(vb, "floordiv")
    if va is not None and vb is not None:
        return _fold(a.dtype, math.floor(va / vb) if a.dtype.is_float else va // vb)
    if vb == 1:
        return a
    return _e.FloorDiv(a, b)


def floormod(a, b):
    """a - floor(a / b) * b, folded (``x % 1 -> 0``)."""
    a, b = match_dtypes(a, b)
    va, vb = const_value(a), const_value(b)
    if vb is not None:
        _check_divisor(vb, "floormod")
    if va is not None and vb is not None:
        return _fold(a.dtype, va - math.floor(va / vb) * vb if a.dtype.is_float else va % vb)
    if vb == 1 and _is_int(a.dtype):
        return const(0, a.dtype)
    return _e.FloorMod(a, b)


indexdiv = floordiv
indexmod = floormod


def min(a, b):  # noqa: A001  (TVM's name)
    """min(a, b), folded."""
    a, b = match_dtypes(a, b)
    va, vb = const_value(a), const_value(b)
    if va is not None and vb is not None:
        return _fold(a.dtype, builtins.min(va, vb))
    return _e.Min(a, b)


def max(a, b):  # noqa: A001  (TVM's name)
    """max(a, b), folded."""
    a, b = match_dtypes(a, b)
    va, vb = const_value(a), const_value(b)
    if va is not None and vb is not None:
        return _fold(a.dtype, builtins.max(va, vb))
    return _e.Max(a, b)


def _compare(node_type, fold):
    def build(a, b):
        a, b = match_dtypes(a, b)
        va, vb = const_value(a), const_value(b)
        if va is not None and vb is not None:
            return _e.IntImm("bool", fold(va, vb))
        return node_type(a, b)

    build.__doc__ = f"The comparison {node_type.__doc__}, folded on constants."
    return build


equal = _compare(_e.EQ, lambda x, y: x == y)
not_equal = _compare(_e.NE, lambda x, y: x != y)
less = _compare(_e.LT, lambda x, y: x < y)
less_equal = _compare(_e.LE, lambda x, y: x <= y)
greater = _compare(_e.GT, lambda x, y: x > y)
greater_equal = _compare(_e.GE, lambda x, y: x >= y)


def _as_bool(x):
    x = convert(x, "bool")
    if not x.dtype.element_of.is_bool:
        raise TypeError(f"expected a bool expression, got {x.dtype} expression {x!r}")
    return x


def logical_and(a, b):
    """a && b on bool expressions, folded."""
    a, b = _as_bool(a), _as_bool(b)
    va, vb = const_value(a), const_value(b)
    if va is not None:
        return b if va else a
    if vb is not None:
        return a if vb else b
    return _e.And(a, b)


def logical_or(a, b):
    """a || b on bool expressions, folded."""
    a, b = _as_bool(a), _as_bool(b)
    va, vb = const_value(a), const_value(b)
    if va is not None:
        return a if va else b
    if vb is not None:
        return b if vb else a
    return _e.Or(a, b)


def logical_not(a):
    """!a on a bool expression, folded."""
    a = _as_bool(a)
    if const_value(a) is not None:
        return _e.IntImm("bool", not a.value)
    return _e.Not(a)


def all(*conds):  # noqa: A001  (TVM's name)
    """The conjunction of the conditions (true when there are none)."""
    result = _e.IntImm("bool", True)
    for cond in conds:
        result = logical_and(result, cond)
    return result


def any(*conds):  # noqa: A001  (TVM's name)
    """The disjunction of the conditions (false when there are none)."""
    result = _e.IntImm("bool", False)
    for cond in conds:
        result = logical_or(result, cond)
    return result


def negate(a):
    """-a."""
    a = convert(a)
    if const_value(a) is not None:
        return _fold(a.dtype, -a.value)
    return subtract(const(0, a.dtype), a)


def min_value(dtype):
    """The smallest value of ``dtype`` (the identity of max-reductions)."""
    dtype = DataType(dtype)
    if dtype.is_float:
        return _e.FloatImm(dtype, float(_finfo(dtype).min))
    if dtype.is_bool:
        return _e.IntImm(dtype, 0)
    return _e.IntImm(dtype, int(np.iinfo(dtype.numpy_dtype).min))


def max_value(dtype):
    """The largest value of ``dtype`` (the identity of min-reductions)."""
    dtype = DataType(dtype)
    if dtype.is_float:
        return _e.FloatImm(dtype, float(_finfo(dtype).max))
    if dtype.is_bool:
        return _e.IntImm(dtype, 1)
    return _e.IntImm(dtype, int(np.iinfo(dtype.numpy_dtype).max))


def _finfo(dtype):
    """The float limits of ``dtype``: numpy's ``finfo`` knows its own floats only, that of
    ml_dtypes (which a narrow float's numpy dtype comes from) bfloat16, float8 and float4
    too."""
    np_dtype = dtype.numpy_dtype
    if np_dtype.name in ("float16", "float32", "float64"):
        return np.finfo(np_dtype)
    import ml_dtypes

    return ml_dtypes.finfo(np_dtype)


def call_intrin(dtype, op_name, *args):
    """A call of the intrinsic ``op_name`` ("tir.exp", ...) returning ``dtype``."""
    return _e.Call(dtype, op_name, [a if _is_node_arg(a) else convert(a) for a in args])


def vscale():
    """The scalable-vector multiplier of the target (TVM's ``tir.vscale()``): a call of the
    intrinsic ``tir.vscale``, int32. rvm's C kernels have fixed-width vectors only, so a
    vector whose lane count uses it is refused when made."""
    return _e.Call("int32", "tir.vscale", [])


def _is_node_arg(x):
    return hasattr(x, "_fields") and not isinstance(x, PrimExpr)


def _unary_float(name):
    def build(x):
        x = convert(x)
        return _e.Call(x.dtype, f"tir.{name}", [x])

    build.__name__ = name
    build.__doc__ = f"The intrinsic {name}(x), elementwise, in x's dtype."
    return build


exp = _unary_float("exp")
exp2 = _unary_float("exp2")
log = _unary_float("log")
log2 = _unary_float("log2")
log10 = _unary_float("log10")
log1p = _unary_float("log1p")
sqrt = _unary_float("sqrt")
rsqrt = _unary_float("rsqrt")
tanh = _unary_float("tanh")
sigmoid = _unary_float("sigmoid")
erf = _unary_float("erf")
sin = _unary_float("sin")
cos = _unary_float("cos")
tan = _unary_float("tan")
asin = _unary_float("asin")
acos = _unary_float("acos")
atan = _unary_float("atan")
sinh = _unary_float("sinh")
cosh = _unary_float("cosh")
asinh = _unary_float("asinh")
acosh = _unary_float("acosh")
atanh = _unary_float("atanh")
fabs = _unary_float("fabs")
floor = _unary_float("floor")
ceil = _unary_float("ceil")
round = _unary_float("round")  # noqa: A001  (TVM's name)
trunc = _unary_float("trunc")


def _float_class(name, int_value):
    def build(x):
        x = convert(x)
        if not x.dtype.is_float:
            return _e.IntImm("bool", int_value)
        return _e.Call("bool", f"tir.{name}", [x])

    build.__name__ = name
    build.__doc__ = f"Whether x {name[2:]} ({int_value} for integers)."
    return build


isnan = _float_class("isnan", False)
isinf = _float_class("isinf", False)
isfinite = _float_class("isfinite", True)


def abs(x):  # noqa: A001  (TVM's name)
    """|x|: fabs for floats, a Select for integers."""
    x = convert(x)
    if x.dtype.is_float:
        return fabs(x)
    if const_value(x) is not None:
        return _fold(x.dtype, builtins.abs(x.value))
    return _e.Select(greater_equal(x, 0), x, negate(x))


def power(x, y):
    """x ** y (the intrinsic tir.pow)."""
    x, y = match_dtypes(x, y)
    return _e.Call(x.dtype, "tir.pow", [x, y])


pow = power  # noqa: A001  (TVM's name)


def if_then_else(cond, t, f):
    """``t`` if ``cond`` else ``f``, evaluating only the branch taken (folded when constant)."""
    cond = _as_bool(cond)
    t, f = match_dtypes(t, f)
    if const_value(cond) is not None:
        return t if cond.value else f
    return _e.Call(t.dtype, "tir.if_then_else", [cond, t, f])


CHECK_INDEX = "tir.check_index"


def check_index(index, low, high, message):
    """``index`` (an int64) when ``low <= index < high``; otherwise the kernel fails with
    ``IndexError: <kernel>: message``, its three ``{}`` filled with the index, ``low`` and
    ``high`` (the C kernel finishes its loops first, reading ``low`` in place of the index,
    and discards its result).

    >>> from rvm.tir.expr import Var
    >>> check_index(Var("i", "int64"), -5, 5, "take: index {} out of range [{}, {})").op
    'tir.check_index'
    """
    index, low, high = (cast(convert(v), "int64") for v in (index, low, high))
    index_message_parts(message)
    return _e.Call("int64", CHECK_INDEX, [index, low, high, _e.StringImm(message)])


def index_message_parts(message):
    """The four literal parts around the three ``{}`` of a check_index message (ValueError
    when it has another number of them)."""
    parts = message.split("{}") if isinstance(message, str) else None
    if parts is None or len(parts) != 4:
        raise ValueError(f"check_index: the message must be a str with three '{{}}' (index, "
                         f"low, high), got {message!r}")
    return parts


def call_packed(name, *args):
    """Calls the global packed function ``name`` from inside a kernel (returns int32 status).

    Arguments are expressions or Buffers (passed as DLTensors).
    """
    return call_intrin("int32", "tir.call_packed", _e.StringImm(name), *args)


def call_extern(dtype, name, *args):
    """Calls the C function ``name`` returning ``dtype``."""
    return call_intrin(dtype, "tir.call_extern", _e.StringImm(name), *args)


def _astype(self, dtype):
    """This expression cast to ``dtype``."""
    return cast(self, dtype)


def _equality(fold):
    def method(self, other):  # ``x == None``: NotImplemented, Python falls back to identity
        return fold(self, other) if is_convertible(other) else NotImplemented
    return method


# PrimExprWithOp's Python operators, ``__name__`` and the reflected ``__rname__``.
for _name, _fn in (("add", add), ("sub", subtract), ("mul", multiply), ("truediv", div),
                   ("floordiv", floordiv), ("mod", floormod), ("and", logical_and),
                   ("or", logical_or)):
    setattr(PrimExprWithOp, f"__{_name}__", lambda self, other, fn=_fn: fn(self, other))
    setattr(PrimExprWithOp, f"__r{_name}__", lambda self, other, fn=_fn: fn(other, self))
for _name, _fn in (("pow", power), ("lt", less), ("le", less_equal), ("gt", greater),
                   ("ge", greater_equal)):
    setattr(PrimExprWithOp, f"__{_name}__", lambda self, other, fn=_fn: fn(self, other))
for _name, _fn in (("neg", negate), ("abs", abs), ("invert", logical_not)):
    setattr(PrimExprWithOp, f"__{_name}__", lambda self, fn=_fn: fn(self))
PrimExprWithOp.__eq__ = _equality(equal)
PrimExprWithOp.__ne__ = _equality(not_equal)
PrimExprWithOp.astype = _astype
