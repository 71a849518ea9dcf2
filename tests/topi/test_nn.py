import numpy as np
import pytest

from rvm import te, topi
from tests.topi.helpers import evaluate, rand


def test_relu():
    a = te.placeholder((2, 3), name="a")
    x = rand(2, 3)
    np.testing.assert_allclose(evaluate(topi.nn.relu(a), [a], [x]), np.maximum(x, 0))


def test_dense_matches_numpy_and_marks_weight():
    x = te.placeholder((2, 5), name="x")
    w = te.placeholder((3, 5), name="w")
    y = topi.nn.dense(x, w)
    assert y.name == "T_matmul_NT"
    assert te.create_prim_func([x, w, y]).attrs["layout_free_buffers"] == [1]
    xv, wv = rand(2, 5), rand(3, 5, seed=1)
    np.testing.assert_allclose(evaluate(y, [x, w], [xv, wv]), xv @ wv.T, rtol=1e-5, atol=1e-6)


def test_dense_with_bias():
    x = te.placeholder((2, 5), name="x")
    w = te.placeholder((3, 5), name="w")
    b = te.placeholder((3,), name="b")
    y = topi.nn.dense(x, w, b)
    xv, wv, bv = rand(2, 5), rand(3, 5, seed=1), rand(3, seed=2)
    np.testing.assert_allclose(evaluate(y, [x, w, b], [xv, wv, bv]), xv @ wv.T + bv, rtol=1e-5,
                               atol=1e-6)


def test_dense_rank_check():
    with pytest.raises(ValueError, match="2-D"):
        topi.nn.dense(te.placeholder((2, 3, 4), name="x"), te.placeholder((3, 4), name="w"))


def test_bias_add_on_axis_1():
    x = te.placeholder((2, 3, 2), name="x")
    b = te.placeholder((3,), name="b")
    xv, bv = rand(2, 3, 2), rand(3, seed=3)
    np.testing.assert_allclose(evaluate(topi.nn.bias_add(x, b), [x, b], [xv, bv]),
                               xv + bv[None, :, None], rtol=1e-6)


@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax(axis):
    x = te.placeholder((3, 4), name="x")
    xv = rand(3, 4) * 3
    e = np.exp(xv - xv.max(axis=axis, keepdims=True))
    np.testing.assert_allclose(evaluate(topi.nn.softmax(x, axis), [x], [xv]),
                               e / e.sum(axis=axis, keepdims=True), rtol=1e-5)


def test_dense_with_symbolic_batch_and_int64_dims():
    from rvm import tir
    from tests.tir.evaluator import run
    n = tir.Var("n", "int64")
    four, three = tir.const(4, "int64"), tir.const(3, "int64")
    x = te.placeholder((n, four), name="x")
    w = te.placeholder((three, four), name="w")
    y = topi.nn.dense(x, w)
    f = te.create_prim_func([x, w, y])
    assert tir.analysis.verify_well_formed(f)
    for batch in (1, 3):
        xv, wv = rand(batch, 4), rand(3, 4, seed=5)
        out = np.zeros((batch, 3), "float32")
        run(f, xv, wv, out)
        np.testing.assert_allclose(out, xv @ wv.T, rtol=1e-5, atol=1e-6)
