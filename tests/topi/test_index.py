"""topi.index.gather_elements against numpy's take_along_axis, every read in bounds."""
import numpy as np
import pytest

from rvm import te
from rvm.topi.index import gather_elements
from tests.topi.helpers import evaluate, rand


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gather_elements_matches_take_along_axis(axis):
    data = rand(4, 5)
    idx = np.random.default_rng(1).integers(0, data.shape[axis], (3, 5) if axis == 0
                                            else (4, 2)).astype("int64")
    a = te.placeholder(data.shape, "float32", name="a")
    i = te.placeholder(idx.shape, "int64", name="i")
    out = evaluate(gather_elements(a, i, axis=axis), [a, i], [data, idx])
    np.testing.assert_array_equal(out, np.take_along_axis(data, idx, axis=axis))


def test_negative_indices_count_from_the_end_and_the_rest_are_clamped():
    data = rand(3, 4)
    idx = np.array([[-1, 7, 0, -9]] * 3, "int64")
    a = te.placeholder(data.shape, "float32", name="a")
    i = te.placeholder(idx.shape, "int64", name="i")
    out = evaluate(gather_elements(a, i, axis=1), [a, i], [data, idx])
    np.testing.assert_array_equal(out, data[:, [3, 3, 0, 0]])


def test_indices_of_another_rank_are_refused():
    a = te.placeholder((3, 4), "float32", name="a")
    with pytest.raises(ValueError, match=r"indices must have the rank of the data \(2\), got "
                                         "rank 1"):
        gather_elements(a, te.placeholder((4,), "int64", name="i"), axis=1)
