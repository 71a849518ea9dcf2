"""The examples in the docstrings of rvm.ir run as written."""
import doctest
import importlib
import pkgutil

import pytest

import rvm.ir

MODULES = sorted(m.name for m in pkgutil.walk_packages(rvm.ir.__path__, "rvm.ir."))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0
