"""take, gather_elements, strided_slice, the scatters and gather_nd: legalization, script
round trips, and numbers from the c and python targets."""
import numpy as np

from rvm.relax import op as O
from tests.relax.transform.legalize.harness import (
    Case, check_legalized, check_numeric, integers, numbered,
)

F = "float32"
BIG = 2 ** 63 - 1


def _wrapped(rng, shape):
    return rng.integers(-12, 12, shape).astype("int64")


def _scatter_add(data, indices, updates):
    out = data.copy()
    for (r, c), k in np.ndenumerate(indices):
        out[r, k] += updates[r, c]
    return out


def _scatter_rows(data, indices, updates):
    out = data.copy()
    for u, row in enumerate(indices[:, 0]):
        out[row] = updates[u]
    return out


CASES = numbered([
    Case("take_rows", lambda w, i: O.take(w, i, axis=0),
         [((10, 4), F), ((2, 3), "int64", integers(0, 10))], lambda w, i: w[i]),
    Case("take_columns", lambda w, i: O.take(w, i, axis=1),
         [((3, 5), F), ((4,), "int32", integers(0, 5, "int32"))],
         lambda w, i: np.take(w, i, axis=1)),
    Case("take_1d", O.take, [((6,), "int32"), ((2, 2), "int64", integers(-6, 6))],
         lambda w, i: np.take(w, i)),
    Case("take_clip", lambda w, i: O.take(w, i, axis=0, mode="clip"),
         [((4, 2), F), ((5,), "int64", _wrapped)], lambda w, i: np.take(w, i, 0, mode="clip")),
    Case("take_wrap", lambda w, i: O.take(w, i, axis=0, mode="wrap"),
         [((4, 2), F), ((5,), "int64", _wrapped)], lambda w, i: np.take(w, i, 0, mode="wrap")),
    Case("take_symbolic", lambda w, i: O.take(w, i, axis=0),
         [(("v", 3), F), (("n",), "int64", integers(0, 4))], lambda w, i: w[i],
         sizes={"v": 4, "n": 5}),
    Case("gather_elements", lambda w, i: O.gather_elements(w, i, axis=1),
         [((3, 5), F), ((3, 4), "int64", integers(0, 5))],
         lambda w, i: np.take_along_axis(w, i, axis=1)),
    Case("gather_elements_symbolic", lambda w, i: O.gather_elements(w, i, axis=0),
         [(("v", 3), F), (("n", 3), "int64", integers(0, 4))],
         lambda w, i: np.take_along_axis(w, i, axis=0), sizes={"v": 4, "n": 6}),
    Case("strided_slice", lambda x: O.strided_slice(x, axes=[0, 1, 3], begin=[1, 0, 8],
                                                    end=[8, 9, 0], strides=[2, 1, -3]),
         [((8, 9, 10, 10), F)], lambda a: a[1:8:2, 0:9, :, 8:0:-3]),
    Case("strided_slice_negative", lambda x: O.strided_slice(x, [1], [-3], [BIG]),
         [((2, 5), F)], lambda a: a[:, -3:]),
    Case("strided_slice_clamped", lambda x: O.strided_slice(x, [0, 1], [-9, 4], [2, 99]),
         [((3, 6), F)], lambda a: a[-9:2, 4:99]),
    Case("strided_slice_reverse", lambda x: O.strided_slice(x, [0], [BIG], [-BIG], [-1]),
         [((5,), "int32")], lambda a: a[::-1]),
    Case("strided_slice_symbolic", lambda x: O.strided_slice(x, [0, 1], [1, 0], [BIG, 2]),
         [(("n", 3), F)], lambda a: a[1:, 0:2], sizes={"n": 4}),
    Case("scatter_elements_add", lambda d, i, u: O.scatter_elements(d, i, u, 1, "add"),
         [((3, 5), F), ((3, 4), "int64", integers(0, 5)), ((3, 4), F)], _scatter_add),
    Case("scatter_nd_rows", O.scatter_nd,
         [((4, 3), F), ((2, 1), "int64", lambda rng, shape: np.array([[3], [1]])),
          ((2, 3), F)], _scatter_rows),
    Case("gather_nd_batch", lambda d, i: O.gather_nd(d, i, batch_dims=1),
         [((2, 3, 4), F), ((2, 2, 1), "int64", integers(0, 3))],
         lambda d, i: np.stack([d[b][i[b, :, 0]] for b in range(2)])),
    Case("strided_slice_empty", lambda x: O.strided_slice(x, [0], [3], [1]),
         [((4, 2), F)], lambda a: a[3:1]),
])


def test_legalized_and_round_trips(case):
    check_legalized(case)


def test_built_kernels_match_numpy(vm, case):
    check_numeric(vm, case)
