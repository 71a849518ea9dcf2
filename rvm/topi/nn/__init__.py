"""rvm.topi.nn: neural-network operators (dense, convolutions, pooling, normalization,
activations, softmax, attention).

This package is a facade; the definitions live in its modules.
"""
from rvm.topi.nn.attention import attention
from rvm.topi.nn.conv2d import (
    conv2d, conv2d_nchw, conv2d_nhwc, conv2d_transpose, conv2d_transpose_nchw, group_conv2d_nchw,
)
from rvm.topi.nn.dense import bias_add, dense
from rvm.topi.nn.elemwise import gelu, gelu_tanh, leaky_relu, relu, silu
from rvm.topi.nn.norm import batch_norm, group_norm, layer_norm, rms_norm
from rvm.topi.nn.pad import pad
from rvm.topi.nn.pooling import adaptive_pool, pool2d
from rvm.topi.nn.softmax import log_softmax, softmax

__all__ = [
    "adaptive_pool", "attention", "batch_norm", "bias_add", "conv2d", "conv2d_nchw",
    "conv2d_nhwc", "conv2d_transpose", "conv2d_transpose_nchw", "dense", "gelu", "gelu_tanh",
    "group_conv2d_nchw", "group_norm", "layer_norm", "leaky_relu", "log_softmax", "pad",
    "pool2d", "relu", "rms_norm", "silu", "softmax",
]
