"""Tensors made from nothing but a shape: full, full_like and arange.

>>> [d.value for d in full((2, 3), "float32", 1.0).shape]
[2, 3]
"""
import math

from rvm.tir import op as _op
from rvm.tir.arith import simplify_size
from rvm.te.operation import compute
from rvm.te.tensor import Tensor
from rvm.topi.utils import axis_names, named


def _value(fill_value, dtype):
    if isinstance(fill_value, Tensor):  # a 0-d tensor (a Relax scalar operand)
        fill_value = fill_value[()]
    return _op.cast(fill_value, dtype)


def full(shape, dtype, fill_value):
    """A tensor of ``shape`` with every element ``fill_value`` (a number, a PrimExpr or a 0-d
    tensor), in ``dtype``."""
    shape = list(shape)
    value = _value(fill_value, dtype)
    return compute(shape, named(lambda *i: value, axis_names("ax", len(shape))), name="T_full")


def full_like(x, fill_value, dtype=None):
    """A tensor of ``x``'s shape with every element ``fill_value``, in ``dtype`` (default:
    x's)."""
    return full(x.shape, dtype or x.dtype, fill_value)


def arange(start, stop=None, step=1, dtype="float32"):
    """``start, start + step, ...`` up to ``stop`` (exclusive), numpy's arange; one argument
    is the stop.

    >>> [d.value for d in arange(2, 11, 3, "int64").shape]
    [3]
    """
    if stop is None:
        start, stop = 0, start
    start, stop, step = (_op.convert(v) for v in (start, stop, step))
    values = [getattr(v, "value", None) for v in (start, stop, step)]
    if values[2] == 0:
        raise ValueError("arange: step must not be 0")
    if None not in values:
        length = _op.const(max(math.ceil((values[1] - values[0]) / values[2]), 0), "int64")
    elif any(v.dtype.is_float for v in (start, stop, step)):
        raise ValueError("arange: symbolic bounds must be integers")
    else:
        start, stop, step = (_op.cast(v, "int64") for v in (start, stop, step))
        if values[2] is None or values[2] < 0:
            raise ValueError("arange: a symbolic range needs a constant positive step")
        length = simplify_size(_op.max((stop - start + step - 1) // step,
                                       _op.const(0, "int64")))
    first, delta = _op.cast(start, dtype), _op.cast(step, dtype)
    return compute([length], named(lambda i: first + _op.cast(i, dtype) * delta, ["ax0"]),
                   name="T_arange")
