"""rvm.tir.eval.evaluate_prim_func: a lowered PrimFunc run on tensors, as FoldConstant runs it
(the python target's argument checks are tested with it, tests/codegen/python)."""
import numpy as np
import pytest

from rvm import te, tir
from rvm.runtime.ndarray import array, empty
from rvm.script import tir as T
from rvm.tir.eval import EvalError, evaluate_prim_func
from rvm.tir.transform.pipeline import lower_module


def _lowered(func):
    return next(iter(lower_module(func).functions.values()))


def test_symbolic_dimensions_take_the_extents_of_the_tensors():
    n = tir.Var("n", "int64")
    A = te.placeholder((n, 3), name="A")
    B = te.compute((n, 3), lambda i, j: A[i, j] * 2.0 + tir.Cast("float32", i), name="B")
    func = _lowered(te.create_prim_func([A, B]))
    for rows in (1, 4):
        a = np.arange(rows * 3, dtype="float32").reshape(rows, 3)
        b = np.zeros((rows, 3), "float32")
        evaluate_prim_func(func, [a, b])
        np.testing.assert_array_equal(b, a * 2 + np.arange(rows)[:, None])


def test_ndarrays_are_written_in_place():
    A = te.placeholder((4,), name="A", dtype="int32")
    B = te.compute((4,), lambda i: A[3 - i], name="B")
    out = empty((4,), "int32")
    evaluate_prim_func(_lowered(te.create_prim_func([A, B])),
                       [array(np.arange(4, dtype="int32")), out])
    assert out.numpy().tolist() == [3, 2, 1, 0]


def test_wrong_tensor_count_is_an_error_naming_the_kernel():
    A = te.placeholder((2,), name="A")
    func = _lowered(te.create_prim_func([A, te.compute((2,), lambda i: A[i], name="B")]))
    with pytest.raises(EvalError, match="kernel 'k': expected 2 tensors, got 1"):
        evaluate_prim_func(func, [np.zeros(2, "float32")], "k")


@T.prim_func
def _scalar_param(a: T.Buffer((2,), "float32"), s: T.float32):
    for i in range(2):
        a[i] = s


def test_a_scalar_parameter_is_refused():
    with pytest.raises(EvalError, match="parameter 's' is not a buffer"):
        evaluate_prim_func(_lowered(_scalar_param), [np.zeros(2, "float32"), np.float32(1)])
