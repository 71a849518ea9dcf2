import numpy as np
import pytest

from rvm import te, topi
from tests.topi.helpers import evaluate, rand


def test_plain_matmul():
    a = te.placeholder((2, 3), name="a")
    b = te.placeholder((3, 4), name="b")
    out = topi.matmul(a, b)
    av, bv = rand(2, 3), rand(3, 4, seed=1)
    np.testing.assert_allclose(evaluate(out, [a, b], [av, bv]), av @ bv, rtol=1e-5, atol=1e-6)


def test_transposed_operands():
    a = te.placeholder((3, 2), name="a")
    b = te.placeholder((4, 3), name="b")
    out = topi.matmul(a, b, transpose_a=True, transpose_b=True)
    assert out.name == "T_matmul_TT"
    av, bv = rand(3, 2), rand(4, 3, seed=1)
    np.testing.assert_allclose(evaluate(out, [a, b], [av, bv]), av.T @ bv.T, rtol=1e-5,
                               atol=1e-6)


def test_batched_with_broadcast():
    a = te.placeholder((2, 1, 2, 3), name="a")
    b = te.placeholder((3, 3, 2), name="b")
    out = topi.matmul(a, b)
    assert [d.value for d in out.shape] == [2, 3, 2, 2]
    av, bv = rand(2, 1, 2, 3), rand(3, 3, 2, seed=1)
    np.testing.assert_allclose(evaluate(out, [a, b], [av, bv]), np.matmul(av, bv), rtol=1e-5,
                               atol=1e-6)


def test_inner_dimension_mismatch():
    with pytest.raises(ValueError, match="3 vs 4"):
        topi.matmul(te.placeholder((2, 3), name="a"), te.placeholder((4, 5), name="b"))
