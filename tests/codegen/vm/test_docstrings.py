"""The docstring examples of the VM codegen and of relax.build run as written."""
import doctest
import importlib

import pytest


@pytest.mark.parametrize("name", ["rvm.codegen.vm.codegen", "rvm.codegen.vm.args",
                                  "rvm.driver.relax_build"])
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0
