"""The examples in the docstrings of rvm.topi run as written."""
import doctest
import importlib
import pkgutil

import pytest

import rvm.topi

MODULES = sorted(m.name for m in pkgutil.walk_packages(rvm.topi.__path__, "rvm.topi."))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0
