"""Elementwise unary operators: math functions, rounding, sign, predicates, cast and clip.

>>> from rvm.te.operation import placeholder
>>> sin(placeholder((2, 3), name="x")).name
'T_sin'
"""
from rvm.tir import op as _op
from rvm.te.operation import compute
from rvm.topi import tag
from rvm.topi.utils import axis_names, named


def elementwise(x, name, fop):
    """The tensor ``fop(x[i])`` over x's shape, named ``T_<name>``."""
    return compute(x.shape, named(lambda *i: fop(x[i]), axis_names("i", len(x.shape))),
                   name=f"T_{name}", tag=tag.ELEMWISE)


def _unary(name, fop, doc=None):
    def build(x):
        return elementwise(x, name, fop)

    build.__name__ = name
    build.__doc__ = doc or f"Elementwise {name} of a tensor."
    return build


def _keep_ints(fop):
    """``fop`` on floats; integers (already whole) pass through."""
    return lambda v: fop(v) if v.dtype.is_float else v


exp = _unary("exp", _op.exp)
log = _unary("log", _op.log)
sqrt = _unary("sqrt", _op.sqrt)
rsqrt = _unary("rsqrt", _op.rsqrt, "Elementwise 1 / sqrt(x).")
tanh = _unary("tanh", _op.tanh)
sigmoid = _unary("sigmoid", _op.sigmoid)
erf = _unary("erf", _op.erf)
sin = _unary("sin", _op.sin)
cos = _unary("cos", _op.cos)
tan = _unary("tan", _op.tan)
asin = _unary("asin", _op.asin)
acos = _unary("acos", _op.acos)
atan = _unary("atan", _op.atan)
sinh = _unary("sinh", _op.sinh)
cosh = _unary("cosh", _op.cosh)
asinh = _unary("asinh", _op.asinh)
acosh = _unary("acosh", _op.acosh)
atanh = _unary("atanh", _op.atanh)
negative = _unary("negative", _op.negate)
abs = _unary("abs", _op.abs)  # noqa: A001  (TVM's name)
floor = _unary("floor", _keep_ints(_op.floor), "Elementwise floor (integers unchanged).")
ceil = _unary("ceil", _keep_ints(_op.ceil), "Elementwise ceiling (integers unchanged).")
round = _unary("round", _keep_ints(_op.round),  # noqa: A001  (TVM's name)
               "Elementwise rounding to the nearest integer, halves to even (integers "
               "unchanged).")
square = _unary("square", lambda v: v * v, "Elementwise x * x.")
isnan = _unary("isnan", _op.isnan, "Elementwise x != x, a bool tensor.")
isinf = _unary("isinf", _op.isinf, "Elementwise |x| == inf, a bool tensor.")
isfinite = _unary("isfinite", _op.isfinite, "Elementwise: x is neither inf nor NaN (bool).")
logical_not = _unary("logical_not", _op.logical_not, "Elementwise !x of a bool tensor.")


def _sign(v):
    zero, one = _op.const(0, v.dtype), _op.const(1, v.dtype)
    if v.dtype.is_uint:
        return _op.if_then_else(v > zero, one, zero)
    return _op.if_then_else(v > zero, one, _op.if_then_else(v < zero, _op.negate(one), zero))


sign = _unary("sign", _sign, "Elementwise sign: 1, -1 or 0.")


def identity(x):
    """A copy of ``x``."""
    return elementwise(x, "identity", lambda v: v)


def cast(x, dtype):
    """``x`` converted elementwise to ``dtype``."""
    return compute(x.shape, named(lambda *i: _op.cast(x[i], dtype), axis_names("ax", len(x.shape))),
                   name="T_cast", tag=tag.ELEMWISE)


def clip(x, a_min, a_max):
    """``x`` limited to ``[a_min, a_max]`` elementwise (the bounds are converted to x's dtype).

    >>> from rvm.te.operation import placeholder
    >>> clip(placeholder((4,), name="x"), 0, 6).name
    'T_clip'
    """
    lo, hi = _op.cast(a_min, x.dtype), _op.cast(a_max, x.dtype)
    return elementwise(x, "clip", lambda v: _op.max(_op.min(v, hi), lo))
