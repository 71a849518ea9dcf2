"""rvm.relax.op.nn: neural-network operators (``R.nn.relu``, ``R.nn.conv2d``, ...).

This package is a facade; the definitions live in its modules.
"""
from rvm.relax.op.nn.activation import (
    gelu, gelu_tanh, leakyrelu, log_softmax, relu, silu, softmax,
)

__all__ = ["gelu", "gelu_tanh", "leakyrelu", "log_softmax", "relu", "silu", "softmax"]
