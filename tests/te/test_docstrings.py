"""The examples in the docstrings of rvm.te run as written."""
import doctest
import importlib
import pkgutil

import pytest

import rvm.te

MODULES = sorted(m.name for m in pkgutil.walk_packages(rvm.te.__path__, "rvm.te."))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0
