import numpy as np
import pytest
from math import erf

from rvm import te, topi
from tests.topi.helpers import evaluate, rand


@pytest.mark.parametrize("fn, ref", [
    (topi.exp, np.exp), (topi.tanh, np.tanh), (topi.negative, np.negative),
    (topi.sigmoid, lambda v: 1 / (1 + np.exp(-v))), (topi.abs, np.abs),
    (topi.erf, np.vectorize(erf)),
])
def test_unary(fn, ref):
    a = te.placeholder((2, 3), name="a")
    x = rand(2, 3)
    np.testing.assert_allclose(evaluate(fn(a), [a], [x]), ref(x), rtol=1e-5, atol=1e-6)


def test_sqrt_and_log_on_positive():
    a = te.placeholder((3,), name="a")
    x = np.abs(rand(3)) + 0.5
    np.testing.assert_allclose(evaluate(topi.sqrt(a), [a], [x]), np.sqrt(x), rtol=1e-5)
    np.testing.assert_allclose(evaluate(topi.log(a), [a], [x]), np.log(x), rtol=1e-5)


def test_cast():
    a = te.placeholder((3,), name="a")
    out = topi.cast(a, "int32")
    assert out.dtype == "int32"
    x = np.array([1.7, -2.2, 3.0], "float32")
    np.testing.assert_array_equal(evaluate(out, [a], [x]), x.astype("int32"))
