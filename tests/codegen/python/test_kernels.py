"""The python target's argument handling (scalars, non-tensors, layout) and its source."""
import numpy as np
import pytest

import rvm
from rvm import te
from rvm.driver.build_module import build

TARGETS = ["c", "python"]


@pytest.fixture(scope="module", params=TARGETS)
def scale(request):
    A = te.placeholder((4,), name="A")
    alpha, flag = te.var("alpha", "float32"), te.var("flag", "bool")
    B = te.compute((4,), lambda i: A[i] * alpha + flag.astype("float32"), name="B")
    return build(te.create_prim_func([A, alpha, flag, B]), request.param)


def test_scalars_accept_python_numbers(scale):
    out = np.zeros(4, "float32")
    scale["main"](np.ones(4, "float32"), 2, True, out)
    np.testing.assert_allclose(out, 3)
    scale["main"](np.ones(4, "float32"), 0.5, False, out)
    np.testing.assert_allclose(out, 0.5)


def test_scalar_type_errors_name_the_parameter(scale):
    with pytest.raises(TypeError, match="main: parameter 'alpha' expects float32"):
        scale["main"](np.ones(4, "float32"), "two", True, np.zeros(4, "float32"))


def test_non_contiguous_tensors_are_rejected_or_copied(scale):
    out = rvm.nd.empty((4,), "float32")
    # a strided numpy view crosses the packed boundary as a compact copy
    scale["main"](np.ones(8, "float32")[::2], 1.0, False, out)
    np.testing.assert_allclose(out.numpy(), 1)


def test_python_source_is_the_lowered_tir():
    A = te.placeholder((4, 4), name="A")
    lib = build(te.create_prim_func([A, te.compute((4, 4), lambda i, j: A[j, i], name="B")]),
                "python")
    assert "A[j * 4 + i]" in lib.get_source()
    with pytest.raises(ValueError, match="format 'c'"):
        lib.get_source("c")


def test_out_of_range_float_to_int_does_not_raise():
    # C leaves this undefined; the reference gives x86's answer instead of failing.
    A = te.placeholder((4,), name="A")
    lib = build(te.create_prim_func([A, te.compute((4,), lambda i: A[i].astype("int32"))]),
                "python")
    out = np.zeros(4, "int32")
    lib["main"](np.array([1.5, -2.5, 3e9, np.nan], "float32"), out)
    assert out.tolist() == [1, -2, -2 ** 31, -2 ** 31]
