"""The examples in the docstrings of rvm.dlight run as written."""
import doctest
import importlib
import pkgutil

import pytest

import rvm.dlight

MODULES = sorted(m.name for m in pkgutil.walk_packages(rvm.dlight.__path__, "rvm.dlight."))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0
