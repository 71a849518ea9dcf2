"""Elementwise activations: relu, leaky_relu, gelu (exact and tanh form), silu."""
import math

from rvm.tir import op as _op
from rvm.te.operation import compute
from rvm.topi.elemwise import elementwise
from rvm.topi.utils import axis_names, named


def relu(x):
    """``max(x, 0)`` elementwise.

    >>> from rvm.te.operation import placeholder
    >>> relu(placeholder((4,), name="x")).op.body[0].b.value
    0.0
    """
    return compute(x.shape, named(lambda *i: _op.max(x[i], _op.const(0, x.dtype)),
                                  axis_names("i", len(x.shape))), name="compute")


def leaky_relu(x, alpha):
    """``x`` where positive, else ``alpha * x``."""
    return elementwise(x, "leaky_relu", lambda v: _op.if_then_else(
        v > _op.const(0, v.dtype), v, v * _op.const(alpha, v.dtype)))


def gelu(x):
    """``0.5 * x * (1 + erf(x / sqrt(2)))`` elementwise."""
    half, one = _op.const(0.5, x.dtype), _op.const(1.0, x.dtype)
    inv_sqrt2 = _op.const(1 / math.sqrt(2), x.dtype)
    return elementwise(x, "gelu", lambda v: half * v * (one + _op.erf(v * inv_sqrt2)))


def gelu_tanh(x):
    """``0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x ** 3)))`` elementwise."""
    half, one = _op.const(0.5, x.dtype), _op.const(1.0, x.dtype)
    scale, cubic = _op.const(math.sqrt(2 / math.pi), x.dtype), _op.const(0.044715, x.dtype)
    return elementwise(x, "gelu_tanh", lambda v: half * v * (
        one + _op.tanh(scale * (v + cubic * v * v * v))))


def silu(x):
    """``x * sigmoid(x)`` elementwise."""
    return elementwise(x, "silu", lambda v: v * _op.sigmoid(v))
