"""``rvm.relax.testing.nn`` used as TVM's tests use ``tvm.relax.testing.nn``: modules called
inside a BlockBuilder function scope, their parameters passed as function parameters, and
``init_params`` for the weights of ``main``."""
import numpy as np
import pytest

from rvm import relax, tir, topi
from rvm.relax.testing import nn
from tests.tvm_compat.helpers import run_both

rng = np.random.default_rng(3)


def _build_mlp(data_shape, bias=False, dataflow=True):
    builder = relax.BlockBuilder()
    with builder.function("main"):
        model = nn.Sequential(
            nn.Linear(data_shape[1], 16, bias=bias),
            nn.ReLU(),
            nn.Linear(16, 4, bias=bias),
            nn.LogSoftmax(),
        )
        data = nn.Placeholder(data_shape, name="data")
        if dataflow:
            with builder.dataflow():
                output = builder.emit_output(model(data))
        else:
            output = model(data)
        params = [data] + model.parameters()
        builder.emit_func_output(output, params=params)
    return builder.get()


def _log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def test_sequential_mlp_runs_and_matches_numpy():
    assert relax.testing.nn is nn  # reachable as an attribute, as tvm.relax.testing.nn
    mod = _build_mlp((2, 8))
    assert [p.name_hint for p in mod["main"].params] == [
        "data", "linear_weight", "linear_weight1"]
    data = rng.standard_normal((2, 8)).astype("float32")
    w1 = rng.standard_normal((8, 16)).astype("float32")
    w2 = rng.standard_normal((16, 4)).astype("float32")
    out = run_both(mod, data, w1, w2)
    np.testing.assert_allclose(out, _log_softmax(np.maximum(data @ w1, 0) @ w2), rtol=1e-5,
                               atol=1e-5)


def test_init_params_gives_zero_weights_for_main():
    mod = _build_mlp((1, 3), bias=True, dataflow=False)
    params = nn.init_params(mod)
    assert [p.shape for p in params] == [(3, 16), (16,), (16, 4), (4,)]
    assert all(not p.numpy().any() and str(p.dtype) == "float32" for p in params)
    out = run_both(mod, np.ones((1, 3), "float32"), *[p.numpy() for p in params])
    np.testing.assert_allclose(out, np.full((1, 4), np.log(0.25), "float32"), rtol=1e-6)


def test_unique_names_inside_a_function_and_shape_checks():
    assert nn.Parameter((2, 3)).name_hint == "param"  # no builder: the name as given
    builder = relax.BlockBuilder()
    with builder.function("main"):
        a, b = nn.Parameter((2,), name="w"), nn.Parameter((2,), name="w")
        assert (a.name_hint, b.name_hint) == ("w", "w1")
        assert isinstance(a, relax.Var) and a.struct_info.ndim == 1
        builder.emit_func_output(a, params=[a, b])
    with pytest.raises(TypeError, match="the shape of Placeholder is expected to be a list or "
                                        "a tuple, got int"):
        nn.Placeholder(3)


def test_emit_te_and_custom_module_parameters():
    class Scale(nn.Module):
        def __init__(self, n):
            self.weights = {"scale": nn.Parameter((n,), name="scale")}
            self.shift = [nn.Parameter((n,), name="shift")]

        def forward(self, x):
            y = nn.emit_te(topi.multiply, x, self.weights["scale"])
            return nn.emit(relax.op.add(y, self.shift[0]), name_hint="shifted")

    builder = relax.BlockBuilder()
    with builder.function("main"):
        model = Scale(3)
        x = nn.Placeholder((3,), name="data")
        out = model(x)
        assert out.name_hint == "shifted"
        builder.emit_func_output(out, params=[x] + model.parameters())
    mod = builder.get()
    assert [p.name_hint for p in mod["main"].params] == ["data", "scale", "shift"]
    x, s, t = (rng.standard_normal(3).astype("float32") for _ in range(3))
    np.testing.assert_allclose(run_both(mod, x, s, t), x * s + t, rtol=1e-6)


def test_misuse_is_refused_with_a_clear_error():
    with pytest.raises(RuntimeError, match="no BlockBuilder function scope is active"):
        nn.emit(relax.op.add(nn.Parameter((2,)), nn.Parameter((2,))))
    with pytest.raises(NotImplementedError, match="does not define forward"):
        nn.Module()(1)
    n = tir.Var("n", "int64")
    builder = relax.BlockBuilder()
    with builder.function("main"):
        data = nn.Placeholder((n,), name="data")
        weight = nn.Parameter((n,), name="weight")
        builder.emit_func_output(nn.emit(relax.op.add(data, weight)), params=[data, weight])
    with pytest.raises(TypeError, match="cannot initialize parameter 'weight' of unknown shape"):
        nn.init_params(builder.get())
