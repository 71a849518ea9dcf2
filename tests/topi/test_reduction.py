import numpy as np
import pytest

from rvm import te, topi
from tests.topi.helpers import evaluate, rand


@pytest.mark.parametrize("fn, ref", [(topi.sum, np.sum), (topi.max, np.max), (topi.min, np.min),
                                     (topi.mean, np.mean)])
@pytest.mark.parametrize("axis, keepdims", [(None, False), (1, False), ((0, 2), True), (-1, True)])
def test_reductions(fn, ref, axis, keepdims):
    a = te.placeholder((2, 3, 4), name="a")
    av = rand(2, 3, 4)
    out = fn(a, axis, keepdims)
    expected = ref(av, axis=axis, keepdims=keepdims)
    got = evaluate(out, [a], [av])
    np.testing.assert_allclose(got.reshape(np.shape(expected)), expected, rtol=1e-5, atol=1e-6)
    assert len(out.shape) == np.ndim(expected)


def test_reduction_name():
    assert topi.sum(te.placeholder((2, 3), name="lv"), 1).name == "lv_red"


def test_bad_axis():
    with pytest.raises(ValueError, match="out of range"):
        topi.sum(te.placeholder((2, 3), name="a"), 2)
