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


def _pool_reference(x, k, s, p, ceil_mode, kind, count_include_pad=True):
    """PyTorch's 2-D pooling, in numpy (a window must start inside the input or its leading
    padding; an average without the padding divides by the taps inside the input)."""
    n, c, h, w = x.shape

    def out(size):
        span = size + 2 * p - k
        o = (-(-span // s) if ceil_mode else span // s) + 1
        return o - 1 if ceil_mode and (o - 1) * s >= size + p else o

    oh, ow = out(h), out(w)
    res = np.zeros((n, c, oh, ow), "float32")
    for i in range(oh):
        for j in range(ow):
            y0, x0 = i * s - p, j * s - p
            ys, xs = slice(max(y0, 0), min(y0 + k, h)), slice(max(x0, 0), min(x0 + k, w))
            window = x[:, :, ys, xs]
            if kind == "max":
                res[:, :, i, j] = window.max(axis=(2, 3))
            else:
                taps = (min(y0 + k, h + p) - y0) * (min(x0 + k, w + p) - x0) \
                    if count_include_pad else window.shape[2] * window.shape[3]
                res[:, :, i, j] = window.sum(axis=(2, 3)) / taps
    return res


@pytest.mark.parametrize("k,s,p,ceil_mode,kind,include", [
    (3, 2, 1, False, "max", True), (3, 2, 1, True, "max", True),
    (2, 2, 0, True, "max", True),   # ceil_mode alone: the last window passes the input's end
    (3, 2, 1, True, "avg", False), (3, 2, 1, False, "avg", True), (2, 2, 0, False, "max", True),
])
def test_a_pool_whose_windows_leave_the_input_reads_a_padded_copy(k, s, p, ceil_mode, kind,
                                                                   include):
    x = te.placeholder((1, 2, 7, 9), name="x")
    out = topi.nn.pool2d(x, (k, k), (s, s), (1, 1), (p, p, p, p), kind, ceil_mode,
                         count_include_pad=include)
    stages = {t.op.name for t in [out] + list(out.op.input_tensors)} | {
        t.op.name for u in out.op.input_tensors for t in u.op.input_tensors}
    leaves = p > 0 or ceil_mode and (9 - k) % s != 0
    assert ("pad_temp" in stages) == leaves
    a = rand(1, 2, 7, 9)
    np.testing.assert_allclose(evaluate(out, [x], [a]),
                               _pool_reference(a, k, s, p, ceil_mode, kind, include),
                               rtol=1e-5, atol=1e-6)
