"""rvm.testing: helpers TVM's tests use (``tvm.testing``): ``assert_allclose``, ``main``,
``parameter``, ``fixture``.

This package is a facade; the definitions live in its modules. pytest is
imported only by the helpers that need it.
"""
from rvm.testing.utils import assert_allclose, fixture, main, parameter

__all__ = ["assert_allclose", "fixture", "main", "parameter"]
