"""The examples in the docstrings of rvm.tir run as written."""
import doctest
import importlib
import pkgutil

import pytest

import rvm.tir

MODULES = sorted(m.name for m in pkgutil.walk_packages(rvm.tir.__path__, "rvm.tir."))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0
