"""rvm.relax.testing: helpers for building test workloads (TVM's ``tvm.relax.testing``);
``nn`` holds the BlockBuilder-based PyTorch-like modules.

This package is a facade; the definitions live in its modules.
"""
from rvm.relax.testing import nn

__all__ = ["nn"]
