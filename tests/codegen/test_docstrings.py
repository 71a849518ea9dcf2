"""The examples in the docstrings of the kernel compiler's modules run as written."""
import doctest
import importlib

import pytest

import rvm.codegen

MODULES = sorted(
    [f"rvm.codegen.c.{name}" for name in ("preamble", "prologue", "source", "target",
                                          "kernel_signature")]
    + ["rvm.codegen.python.kernels"]
    + ["rvm.driver.build_module", "rvm.runtime.compiler", "rvm.runtime.elf_check",
       "rvm.runtime.kernel_library",
       "rvm.support.disk_cache"])


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0
