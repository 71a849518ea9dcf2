"""The examples in the docstrings of the Relax passes in rvm.relax.transform run as written."""
import doctest
import importlib
import pkgutil

import pytest

import rvm.relax.transform

MODULES = sorted(m.name for m in pkgutil.iter_modules(rvm.relax.transform.__path__,
                                                      "rvm.relax.transform."))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0
