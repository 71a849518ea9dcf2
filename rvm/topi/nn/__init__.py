"""rvm.topi.nn: neural-network operators (dense, relu, bias_add, softmax).

This package is a facade; the definitions live in its modules.
"""
from rvm.topi.nn.dense import bias_add, dense
from rvm.topi.nn.elemwise import relu
from rvm.topi.nn.softmax import softmax

__all__ = ["bias_add", "dense", "relu", "softmax"]
