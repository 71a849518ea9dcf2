"""rvm.topi.nn: neural-network operators (dense, activations, softmax, ...).

This package is a facade; the definitions live in its modules.
"""
from rvm.topi.nn.dense import bias_add, dense
from rvm.topi.nn.elemwise import gelu, gelu_tanh, leaky_relu, relu, silu
from rvm.topi.nn.softmax import log_softmax, softmax

__all__ = ["bias_add", "dense", "gelu", "gelu_tanh", "leaky_relu", "log_softmax", "relu", "silu",
           "softmax"]
