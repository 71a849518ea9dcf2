"""Reductions and scans: legalization, script round trips, and numbers from the c and python
targets."""
import numpy as np

from rvm.relax import op as O
from tests.relax.transform.legalize.harness import (
    Case, check_legalized, check_numeric, integers, numbered, uniform,
)

F = "float32"
_NAN_ROWS = np.array([[1, np.nan, 3, np.nan], [-np.inf, -np.inf, -np.inf, -np.inf],
                      [2, 5, 5, 1]], F)

CASES = numbered([
    Case("sum", lambda x: O.sum(x, axis=1), [((2, 3, 4), F)], lambda a: a.sum(axis=1)),
    Case("sum_all", O.sum, [((2, 3), F)], lambda a: np.array(a.sum(), F)),
    Case("sum_keepdims", lambda x: O.sum(x, axis=[0, 2], keepdims=True), [((2, 3, 4), F)],
         lambda a: a.sum(axis=(0, 2), keepdims=True)),
    Case("sum_int", lambda x: O.sum(x, axis=-1), [((2, 5), "int32")],
         lambda a: a.sum(-1).astype("int32")),
    Case("prod", lambda x: O.prod(x, axis=0), [((3, 4), F, uniform(0.5, 1.5))],
         lambda a: a.prod(axis=0)),
    Case("mean", lambda x: O.mean(x, axis=[-1]), [(("n", 6), F)], lambda a: a.mean(axis=-1),
         sizes={"n": 3}),
    Case("max", lambda x: O.max(x, axis=1), [((3, 4), F)], lambda a: a.max(axis=1)),
    Case("max_of_infinities", lambda x: O.max(x, axis=1),
         [((2, 2), F, lambda rng, s: np.full(s, -np.inf, F))], lambda a: a.max(axis=1)),
    Case("min", lambda x: O.min(x, axis=0, keepdims=True), [((3, 4), "int64")],
         lambda a: a.min(axis=0, keepdims=True)),
    Case("variance", lambda x: O.variance(x, axis=1), [((3, 5), F)], lambda a: a.var(axis=1)),
    Case("variance_all_keepdims", lambda x: O.variance(x, keepdims=True), [((2, 3), F)],
         lambda a: a.var(keepdims=True)),
    Case("std", lambda x: O.std(x, axis=[0, 1]), [(("n", 3, 2), F)],
         lambda a: a.std(axis=(0, 1)), sizes={"n": 4}),
    Case("argmax", lambda x: O.argmax(x, axis=1), [((3, 4), F)], lambda a: a.argmax(axis=1)),
    Case("argmax_nan_and_ties", lambda x: O.argmax(x, axis=1),
         [((3, 4), F, lambda rng, s: _NAN_ROWS)], lambda a: a.argmax(axis=1)),
    Case("argmin_nan_and_ties", lambda x: O.argmin(x, axis=-1, keepdims=True),
         [((3, 4), F, lambda rng, s: _NAN_ROWS)], lambda a: a.argmin(axis=-1, keepdims=True)),
    Case("argmax_flat", O.argmax, [((3, 4), "int32", integers(0, 5, "int32"))],
         lambda a: np.array(a.argmax(), "int64")),
    Case("argmin_symbolic", lambda x: O.argmin(x, axis=0), [(("n", 2), F)],
         lambda a: a.argmin(axis=0), sizes={"n": 5}),
    Case("cumsum", lambda x: O.cumsum(x, axis=1), [((2, 5), F)], lambda a: a.cumsum(axis=1)),
    Case("cumsum_axis0", lambda x: O.cumsum(x, axis=0), [((4, 3), "int32")],
         lambda a: a.cumsum(axis=0).astype("int32")),
    Case("cumsum_flat_dtype", lambda x: O.cumsum(x, dtype="int64"), [((2, 3), "int32")],
         lambda a: a.cumsum(dtype="int64")),
    Case("cumsum_exclusive", lambda x: O.cumsum(x, axis=-1, exclusive=True), [((2, 4), F)],
         lambda a: np.concatenate([np.zeros((2, 1), F), a.cumsum(axis=-1)[:, :-1]], axis=1)),
    Case("cumsum_symbolic", lambda x: O.cumsum(x, axis=0), [(("n",), F)], np.cumsum,
         sizes={"n": 6}),
    Case("cumprod", lambda x: O.cumprod(x, axis=1), [((2, 4), F, uniform(0.5, 1.5))],
         lambda a: a.cumprod(axis=1)),
])


def test_legalized_and_round_trips(case):
    check_legalized(case)


def test_built_kernels_match_numpy(vm, case):
    check_numeric(vm, case)
