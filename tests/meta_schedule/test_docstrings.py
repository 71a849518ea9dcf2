"""The examples in the docstrings of rvm.meta_schedule run as written."""
import doctest
import importlib
import pkgutil

import pytest

import rvm.meta_schedule

MODULES = sorted(m.name for m in pkgutil.walk_packages(rvm.meta_schedule.__path__,
                                                        "rvm.meta_schedule."))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0
