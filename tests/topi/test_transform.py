import numpy as np
import pytest

from rvm import te, topi
from tests.topi.helpers import evaluate, rand


def test_reshape_with_inferred_dim():
    a = te.placeholder((2, 6), name="a")
    out = topi.reshape(a, (3, -1))
    assert [d.value for d in out.shape] == [3, 4]
    av = rand(2, 6)
    np.testing.assert_array_equal(evaluate(out, [a], [av]), av.reshape(3, 4))


def test_reshape_to_more_dims():
    a = te.placeholder((4, 6), name="a")
    av = rand(4, 6)
    np.testing.assert_array_equal(evaluate(topi.reshape(a, (2, 3, 4)), [a], [av]),
                                  av.reshape(2, 3, 4))


def test_reshape_size_mismatch():
    with pytest.raises(ValueError, match="cannot reshape"):
        topi.reshape(te.placeholder((2, 6), name="a"), (5, 2))


@pytest.mark.parametrize("axes", [None, (1, 0, 2), (2, 0, 1)])
def test_transpose(axes):
    a = te.placeholder((2, 3, 4), name="a")
    av = rand(2, 3, 4)
    np.testing.assert_array_equal(evaluate(topi.transpose(a, axes), [a], [av]),
                                  np.transpose(av, axes))


def test_transpose_bad_axes():
    with pytest.raises(ValueError, match="permutation"):
        topi.transpose(te.placeholder((2, 3), name="a"), (0, 0))
