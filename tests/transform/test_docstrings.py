"""The examples in the docstrings of the Relax passes in rvm.transform run as written."""
import doctest
import importlib
import pkgutil

import pytest

import rvm.transform

MODULES = sorted(m.name for m in pkgutil.iter_modules(rvm.transform.__path__, "rvm.transform.")
                 if m.name not in ("rvm.transform.tir", "rvm.transform.pass_infra"))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0
