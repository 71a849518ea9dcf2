"""Elementwise activations: relu."""
from rvm.tir import op as _op
from rvm.te.operation import compute
from rvm.topi.utils import axis_names, named


def relu(x):
    """``max(x, 0)`` elementwise.

    >>> from rvm.te.operation import placeholder
    >>> relu(placeholder((4,), name="x")).op.body[0].b.value
    0.0
    """
    return compute(x.shape, named(lambda *i: _op.max(x[i], _op.const(0, x.dtype)),
                                  axis_names("i", len(x.shape))), name="compute")
