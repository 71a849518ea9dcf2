"""Creation operators: legalization, script round trips, and numbers from the c and python
targets."""
import numpy as np

from rvm.relax import op as O
from rvm.relax.expr import const
from tests.relax.transform.legalize.harness import Case, check_legalized, check_numeric, numbered

F = "float32"


def _dims(x):
    return list(x.struct_info.shape_values)


CASES = numbered([
    Case("full", lambda x: O.add(x, O.full((2, 3), const(1.5, F))), [((2, 3), F)],
         lambda a: a + 1.5),
    Case("full_dtype", lambda x: O.full(_dims(x), const(7, "int32"), "float32"),
         [(("n", 2), F)], lambda a: np.full(a.shape, 7, F), sizes={"n": 4}),
    Case("full_like", lambda x: O.full_like(x, const(2.0, F), "int64"), [((3,), F)],
         lambda a: np.full(a.shape, 2, "int64")),
    Case("zeros", lambda x: O.add(x, O.zeros((2, 3), F)), [((2, 3), F)], lambda a: a),
    Case("ones", lambda x: O.ones(_dims(x), "int32"), [(("n", 3), F)],
         lambda a: np.ones(a.shape, "int32"), sizes={"n": 2}),
    Case("zeros_like", O.zeros_like, [((2, 2), "int64")], np.zeros_like),
    Case("ones_like", lambda x: O.ones_like(x, "float32"), [((4,), "bool")],
         lambda a: np.ones(a.shape, F)),
    Case("arange", lambda x: O.add(x, O.astype(O.arange(5), F)), [((5,), F)],
         lambda a: a + np.arange(5, dtype=F)),
    Case("arange_step", lambda x: O.add(x, O.arange(0.5, 3, 0.75)), [((4,), F)],
         lambda a: a + np.arange(0.5, 3, 0.75, dtype=F)),
    Case("arange_negative", lambda x: O.add(x, O.arange(10, 1, -3, "int32")), [((3,), "int32")],
         lambda a: a + np.arange(10, 1, -3, dtype="int32")),
    Case("arange_symbolic", lambda x: O.arange(0, x.struct_info.shape_values[0], 2),
         [(("n",), F)], lambda a: np.arange(0, a.shape[0], 2), sizes={"n": 7}),
])


def test_legalized_and_round_trips(case):
    check_legalized(case)


def test_built_kernels_match_numpy(vm, case):
    check_numeric(vm, case)
