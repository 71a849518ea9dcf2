"""Helpers TVM's schedule tests use (TVM's ``tvm.tir.schedule.testing``).

>>> from rvm.tir import Evaluate, PrimFunc
>>> f = PrimFunc([], Evaluate(0)).with_attr("global_symbol", "f")
>>> g = PrimFunc([], Evaluate(0)).with_attr("global_symbol", "g")
>>> assert_structural_equal_ignore_global_symbol(f, g)
"""
from rvm.ir.base import assert_structural_equal


def assert_structural_equal_ignore_global_symbol(func1, func2, *args, **kwargs):
    """``assert_structural_equal(func1, func2, ...)`` with both functions' ``global_symbol``
    set to ``"main"``, so the names functions get from their Python definitions do not
    count."""
    assert_structural_equal(func1.with_attr("global_symbol", "main"),
                            func2.with_attr("global_symbol", "main"), *args, **kwargs)
