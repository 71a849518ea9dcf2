"""rvm.testing: helpers TVM's tests use (``tvm.testing``): ``assert_allclose``, ``main``,
``parameter``, ``parameters``, ``fixture``, ``requires_llvm``, ``requires_gpu``, ``echo``,
``device_test``.

This package is a facade; the definitions live in its modules. pytest is
imported only by the helpers that need it.
"""
from rvm.testing.packed import device_test, echo
from rvm.testing.utils import (
    assert_allclose, fixture, main, parameter, parameters, requires_gpu, requires_llvm,
)

__all__ = ["assert_allclose", "device_test", "echo", "fixture", "main", "parameter",
           "parameters", "requires_gpu", "requires_llvm"]
