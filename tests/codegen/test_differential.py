"""The c and python targets agree with numpy on every kernel of kernel_cases.

All cases are compiled as one module (one C translation unit), once per session.
"""
import zlib

import numpy as np
import pytest

from rvm.driver.build_module import build
from rvm.ir.module import IRModule
from rvm.runtime.kernel_library import KernelLibrary
from tests.codegen.kernel_cases import CASES


@pytest.fixture(scope="module")
def module():
    return IRModule({name: spec[0]() for name, spec in CASES.items()})


@pytest.fixture(scope="module")
def libraries(module):
    return {"c": build(module, "c"), "python": build(module, "python")}


def test_there_are_enough_cases():
    assert len(CASES) >= 25


def test_one_translation_unit(libraries):
    lib = libraries["c"]
    assert isinstance(lib, KernelLibrary)
    assert sorted(lib.function_names()) == sorted(CASES)
    assert lib.get_source().count("RVM_EXPORT int rvm_kernel_") == len(CASES)


@pytest.mark.parametrize("target", ["c", "python"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_kernel_matches_numpy(libraries, name, target):
    _, make_inputs, reference, tol = CASES[name]
    args = make_inputs(np.random.default_rng(zlib.crc32(name.encode())))
    expected = reference([a.copy() if isinstance(a, np.ndarray) else a for a in args])
    libraries[target][name](*args)
    for index, want in expected.items():
        got = args[index]
        if got.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=f"{name} ({target})")
        else:
            np.testing.assert_array_equal(got, want, err_msg=f"{name} ({target})")
