"""rvm.relax.op.nn: neural-network operators (``R.nn.relu``, ``R.nn.conv2d``, ...).

This package is a facade; the definitions live in its modules.
"""
from rvm.relax.op.nn.activation import (
    dropout, gelu, gelu_tanh, leakyrelu, log_softmax, relu, silu, softmax,
)
from rvm.relax.op.nn.attention import attention
from rvm.relax.op.nn.convolution import conv2d, conv2d_transpose
from rvm.relax.op.nn.normalization import batch_norm, group_norm, layer_norm, rms_norm
from rvm.relax.op.nn.pooling import adaptive_avg_pool2d, avg_pool2d, max_pool2d

__all__ = [
    "adaptive_avg_pool2d", "attention", "avg_pool2d", "batch_norm", "conv2d", "conv2d_transpose",
    "dropout", "gelu", "gelu_tanh", "group_norm", "layer_norm", "leakyrelu", "log_softmax",
    "max_pool2d", "relu", "rms_norm", "silu", "softmax",
]
