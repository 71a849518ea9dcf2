"""The examples in the docstrings of rvm.bytecode run as written."""
import doctest
import importlib
import pkgutil

import pytest

import rvm.bytecode

MODULES = sorted(m.name for m in pkgutil.iter_modules(rvm.bytecode.__path__, "rvm.bytecode."))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0
