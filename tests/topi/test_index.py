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


def test_negative_indices_count_from_the_end():
    data = rand(3, 4)
    idx = np.array([[-1, 3, 0, -4]] * 3, "int64")
    a = te.placeholder(data.shape, "float32", name="a")
    i = te.placeholder(idx.shape, "int64", name="i")
    out = evaluate(gather_elements(a, i, axis=1), [a, i], [data, idx])
    np.testing.assert_array_equal(out, data[:, [3, 3, 0, 0]])


@pytest.mark.parametrize("bad", [4, 7, -5, -9])
def test_an_index_beyond_the_axis_is_refused_not_clamped(bad):
    a = te.placeholder((3, 4), "float32", name="a")
    i = te.placeholder((3, 4), "int64", name="i")
    idx = np.zeros((3, 4), "int64")
    idx[1, 2] = bad
    with pytest.raises(IndexError, match=rf"gather_elements: index {bad} out of range "
                                         r"\[-4, 4\) along axis 1"):
        evaluate(gather_elements(a, i, axis=1), [a, i], [rand(3, 4), idx])


def test_indices_of_another_rank_are_refused():
    a = te.placeholder((3, 4), "float32", name="a")
    with pytest.raises(ValueError, match=r"indices must have the rank of the data \(2\), got "
                                         "rank 1"):
        gather_elements(a, te.placeholder((4,), "int64", name="i"), axis=1)
