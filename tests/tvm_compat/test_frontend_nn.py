"""Models written with ``rvm.relax.frontend.nn`` in the style of TVM's own tests
(tests/python/relax/test_frontend_nn_modules.py, test_frontend_nn_op.py): a module
exported with ``export_tvm(spec=...)`` equals the Relax TVM writes for it, and the
exported functions build and match numpy on both VM engines."""
import numpy as np
import pytest

import rvm
from rvm import relax, te, topi
from rvm.ir import assert_structural_equal
from rvm.relax.frontend import nn
from rvm.relax.frontend.nn import op, spec
from rvm.runtime import ShapeTuple
from rvm.script import relax as R
from tests.tvm_compat.helpers import round_trip, run, run_both

rng = np.random.default_rng(11)


def _random_params(params, scale=0.5):
    return {name: (rng.standard_normal(p.shape) * scale).astype(p.dtype)
            for name, p in params}


def _rms_norm(x, w, eps=1e-5):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w


def test_linear():
    @R.function
    def forward(x: R.Tensor((1, 4), dtype="float32"),
                weight: R.Tensor((8, 4), dtype="float32"),
                bias: R.Tensor((8,), dtype="float32")) -> R.Tensor((1, 8), dtype="float32"):
        R.func_attr({"num_input": 1})
        with R.dataflow():
            permute_dims: R.Tensor((4, 8), dtype="float32") = R.permute_dims(weight, axes=None)
            matmul: R.Tensor((1, 8), dtype="float32") = R.matmul(x, permute_dims)
            add: R.Tensor((1, 8), dtype="float32") = R.add(matmul, bias)
            gv1: R.Tensor((1, 8), dtype="float32") = add
            R.output(gv1)
        return gv1

    mod = nn.Linear(4, 8)
    tvm_mod, params = mod.export_tvm(spec={"forward": {"x": spec.Tensor((1, 4), "float32")}},
                                     debug=False)
    assert [name for name, _ in params] == ["weight", "bias"]
    assert_structural_equal(tvm_mod["forward"], forward.with_attr("global_symbol", "forward"))
    round_trip(tvm_mod)


class MLP(nn.Module):
    def __init__(self):
        self.fc1 = nn.Linear(6, 16)
        self.relu1 = nn.ReLU()
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(self.relu1(self.fc1(x)))


def test_two_layer_mlp_matches_numpy():
    mod, params = MLP().export_tvm(spec={"forward": {"x": nn.spec.Tensor((2, 6), "float32")}})
    assert [name for name, _ in params] == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert mod["forward"].attrs["num_input"] == 1
    w = _random_params(params)
    x = rng.standard_normal((2, 6)).astype("float32")
    out = run_both(mod, x, *w.values(), func="forward")
    hidden = np.maximum(x @ w["fc1.weight"].T + w["fc1.bias"], 0)
    np.testing.assert_allclose(out, hidden @ w["fc2.weight"].T + w["fc2.bias"], rtol=1e-5,
                               atol=1e-5)


class Attention(nn.Module):
    def __init__(self, hidden, heads):
        self.heads, self.head_dim = heads, hidden // heads
        self.q_proj = nn.Linear(hidden, hidden, bias=False)
        self.k_proj = nn.Linear(hidden, hidden, bias=False)
        self.v_proj = nn.Linear(hidden, hidden, bias=False)
        self.o_proj = nn.Linear(hidden, hidden, bias=False)

    def forward(self, x):
        b, s, h = x.shape

        def heads(t):
            t = op.reshape(t, [b, s, self.heads, self.head_dim])
            return op.permute_dims(t, [0, 2, 1, 3])

        q, k, v = heads(self.q_proj(x)), heads(self.k_proj(x)), heads(self.v_proj(x))
        scores = op.matmul(q, op.permute_dims(k, [0, 1, 3, 2])) * (self.head_dim ** -0.5)
        out = op.matmul(op.softmax(scores, axis=-1), v)
        return self.o_proj(op.reshape(op.permute_dims(out, [0, 2, 1, 3]), [b, s, h]))


class TransformerBlock(nn.Module):
    def __init__(self, hidden=8, heads=2, ffn=16):
        self.input_norm = nn.RMSNorm(hidden, axes=-1, bias=False)
        self.attn = Attention(hidden, heads)
        self.post_norm = nn.RMSNorm(hidden, axes=-1, bias=False)
        self.gate_proj = nn.Linear(hidden, ffn, bias=False)
        self.up_proj = nn.Linear(hidden, ffn, bias=False)
        self.down_proj = nn.Linear(ffn, hidden, bias=False)

    def forward(self, x):
        x = x + self.attn(self.input_norm(x))
        h = self.post_norm(x)
        return x + self.down_proj(op.silu(self.gate_proj(h)) * self.up_proj(h))


def _transformer_reference(x, w):
    def linear(t, name):
        return t @ w[name].T

    def heads(t):
        return t.reshape(1, 4, 2, 4).transpose(0, 2, 1, 3)

    h = _rms_norm(x, w["input_norm.weight"])
    q, k, v = (heads(linear(h, f"attn.{n}_proj.weight")) for n in "qkv")
    scores = q @ k.transpose(0, 1, 3, 2) / 2.0
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    attn = (probs @ v).transpose(0, 2, 1, 3).reshape(1, 4, 8)
    x = x + linear(attn, "attn.o_proj.weight")
    h = _rms_norm(x, w["post_norm.weight"])
    gate = linear(h, "gate_proj.weight")
    return x + linear(gate / (1 + np.exp(-gate)) * linear(h, "up_proj.weight"),
                      "down_proj.weight")


def test_transformer_block_with_rms_norm_matches_numpy():
    model = TransformerBlock()
    mod, params = model.export_tvm(spec={"forward": {"x": spec.Tensor([1, 4, 8], "float32")}})
    assert [name for name, _ in params][:2] == ["input_norm.weight", "attn.q_proj.weight"]
    round_trip(mod)
    w = _random_params(params)
    x = rng.standard_normal((1, 4, 8)).astype("float32")
    out = run_both(mod, x, *w.values(), func="forward")
    np.testing.assert_allclose(out, _transformer_reference(x, w), rtol=1e-4, atol=1e-5)


def test_embedding_layer_norm_and_symbolic_length():
    class Model(nn.Module):
        def __init__(self):
            self.embed = nn.Embedding(10, 4)
            self.norm = nn.LayerNorm(4)

        def forward(self, ids):
            return op.gelu(self.norm(self.embed(ids)))

    mod, params = Model().export_tvm(spec={"forward": {"ids": spec.Tensor([2, "n"], "int32")}})
    n = mod["forward"].params[0].struct_info.shape_values[1]
    assert n.name_hint == "n" and str(n.dtype) == "int64"
    w = _random_params(params)
    ids = np.array([[1, 9, 0], [3, 3, 7]], "int32")
    out = run_both(mod, ids, *w.values(), func="forward")
    emb = w["embed.weight"][ids]
    mean, var = emb.mean(-1, keepdims=True), emb.var(-1, keepdims=True)
    normed = (emb - mean) / np.sqrt(var + 1e-5) * w["norm.weight"] + w["norm.bias"]
    from math import erf
    expected = normed * 0.5 * (1 + np.vectorize(erf)(normed / np.sqrt(2)))
    assert out.shape == (2, 3, 4)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)


def test_conv2d_module_and_module_list_names():
    class Model(nn.Module):
        def __init__(self):
            self.convs = nn.ModuleList([nn.Conv2D(2, 3, 3, padding=1), nn.Conv2D(3, 1, 1)])

        def forward(self, x):
            for conv in self.convs:
                x = op.relu(conv(x))
            return x

    mod, params = Model().export_tvm(spec={"forward": {"x": spec.Tensor([1, 2, 5, 5],
                                                                        "float32")}})
    assert [name for name, _ in params] == ["convs.0.weight", "convs.0.bias",
                                            "convs.1.weight", "convs.1.bias"]
    w = _random_params(params)
    x = rng.standard_normal((1, 2, 5, 5)).astype("float32")
    out = run_both(mod, x, *w.values(), func="forward")
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))
    y = np.einsum("nchwij,ocij->nohw", windows, w["convs.0.weight"])
    y = np.maximum(y + w["convs.0.bias"][None, :, None, None], 0)
    y = np.einsum("nchw,oc->nohw", y, w["convs.1.weight"][:, :, 0, 0])
    y = np.maximum(y + w["convs.1.bias"][None, :, None, None], 0)
    np.testing.assert_allclose(out, y, rtol=1e-4, atol=1e-5)


def test_tensor_operators_packed_params_and_two_methods():
    class Model(nn.Module):
        def __init__(self):
            self.scale = nn.Parameter((3,))

        def forward(self, x):
            return (x * self.scale + 1.0) / 2.0 - x

        def double(self, x):
            return x + x

    mod, params = Model().export_tvm(spec={
        "forward": {"x": spec.Tensor([3], "float32"), "$": {"param_mode": "packed"}},
        "double": {"x": spec.Tensor([3], "float32"), "$": {"param_mode": "none"}},
    })
    assert [p.name_hint for p in mod["forward"].params] == ["x", "packed_params"]
    assert [p.name_hint for p in mod["double"].params] == ["x"]
    x = np.array([1.0, -2.0, 4.0], "float32")
    np.testing.assert_allclose(run_both(mod, x, func="double"), 2 * x)
    s = np.array([0.5, 2.0, -1.0], "float32")
    out = run_both(mod, x, (rvm.nd.array(s),), func="forward")
    np.testing.assert_allclose(out, (x * s + 1) / 2 - x)


def test_int_spec_is_a_shape_input():
    class Model(nn.Module):
        def forward(self, x, k):
            return op.reshape(x, [k, 2])

    mod, params = Model().export_tvm(spec={"forward": {"x": spec.Tensor(["n", 2], "float32"),
                                                       "k": spec.Int()}})
    func = mod["forward"]
    assert params == [] and func.attrs["num_input"] == 2
    assert isinstance(func.params[1].struct_info, relax.ShapeStructInfo)
    assert func.params[1].struct_info.values[0].name_hint == "k"
    x = np.arange(6, dtype="float32").reshape(3, 2)
    np.testing.assert_array_equal(run_both(mod, x, ShapeTuple([3]), func="forward"), x)


def test_parameters_bind_data_and_state_dict():
    model = MLP()
    model.fc1.owner = model  # a reference back up the tree is not followed again
    names = [name for name, _ in model.named_parameters()]
    assert names == list(model.state_dict()) == ["fc1.weight", "fc1.bias", "fc2.weight",
                                                 "fc2.bias"]
    model.fc1.bias.data = np.zeros(16, "float32")
    assert model.fc1.bias.data.numpy().shape == (16,)
    with pytest.raises(ValueError, match=r"shape mismatch: expected \(16,\), got \(4,\)"):
        model.fc1.bias.data = np.zeros(4, "float32")
    with pytest.raises(ValueError, match="dtype mismatch: expected float32, got float64"):
        model.fc1.bias.data = np.zeros(16, "float64")
    missing, unexpected = model.load_state_dict({"fc2.bias": np.ones(3, "float32"),
                                                 "other": np.ones(1, "float32")}, strict=False)
    assert unexpected == ["other"] and "fc1.weight" in missing
    assert model.fc2.bias.data.numpy().tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(KeyError, match="missing keys"):
        model.load_state_dict({"fc2.bias": np.ones(3, "float32")})
    with pytest.raises(ValueError, match=r"parameters \['fc1.bias', 'fc2.bias'\] are bound"):
        model.to("float16")
    assert {p.dtype for p in model.parameters()} == {"float32"}  # nothing changed

    half = TransformerBlock()
    half.attn.q_proj.dtype = "float32"  # a nested module's dtype attribute follows too
    half.to("float16")
    assert {p.dtype for p in half.parameters()} == {"float16"}
    assert half.attn.q_proj.dtype == "float16"
    nn.set_default_dtype("float64")
    try:
        assert nn.Linear(2, 2).weight.dtype == "float64"
    finally:
        nn.set_default_dtype("float32")
    assert nn.get_default_dtype() == "float32"


def test_bad_specs_and_misuse_are_refused():
    model = MLP()
    with pytest.raises(ValueError, match=r"MLP has no method 'backward'"):
        model.export_tvm(spec={"backward": {"x": spec.Tensor([1, 6], "float32")}})
    with pytest.raises(ValueError, match=r"takes \['x'\]; spec lacks \['x'\] and has unknown "
                                         r"\['y'\]"):
        model.export_tvm(spec={"forward": {"y": spec.Tensor([1, 6], "float32")}})
    with pytest.raises(TypeError, match="must be an nn.spec.Tensor or nn.spec.Int"):
        model.export_tvm(spec={"forward": {"x": (1, 6)}})
    with pytest.raises(ValueError, match="param_mode must be one of"):
        model.export_tvm(spec={"forward": {"x": spec.Tensor([1, 6], "float32"),
                                           "$": {"param_mode": "bogus"}}})
    with pytest.raises(ValueError, match=r"method 'forward' uses parameters \['fc1.weight', "
                                         r"'fc1.bias', 'fc2.weight', 'fc2.bias'\], but its "
                                         r"spec says param_mode='none'"):
        model.export_tvm(spec={"forward": {"x": spec.Tensor([1, 6], "float32"),
                                           "$": {"param_mode": "none"}}})
    with pytest.raises(ValueError, match="nn.spec.Tensor: unknown dtype 'floot32'"):
        spec.Tensor([1], "floot32")
    with pytest.raises(TypeError, match="a dimension must be an int or a str"):
        spec.Tensor([1.5], "float32")
    with pytest.raises(RuntimeError, match="no function is being built"):
        op.relu(nn.Parameter((2,)))
    with pytest.raises(TypeError, match=r"nn.op.add: b must be an nn.Tensor, got ndarray"):
        op.add(nn.Parameter((2,)), np.zeros(2))
    with pytest.raises(Exception, match="relax.matmul"):
        nn.Linear(5, 2).export_tvm(spec={"forward": {"x": spec.Tensor([1, 6], "float32")}})


def test_tvm_tutorial_mlp_with_zero_pipeline_runs_as_written():
    class MLPModel(nn.Module):
        def __init__(self):
            super(MLPModel, self).__init__()
            self.fc1 = nn.Linear(784, 256)
            self.relu1 = nn.ReLU()
            self.fc2 = nn.Linear(256, 10)

        def forward(self, x):
            x = self.fc1(x)
            x = self.relu1(x)
            x = self.fc2(x)
            return x

    mod, param_spec = MLPModel().export_tvm(
        spec={"forward": {"x": nn.spec.Tensor((1, 784), "float32")}}
    )
    mod = relax.get_pipeline("zero")(mod)
    target = rvm.target.Target("llvm")
    ex = relax.build(mod, target)
    device = rvm.cpu()
    vm = relax.VirtualMachine(ex, device)
    data = np.random.rand(1, 784).astype("float32")
    rvm_data = rvm.nd.array(data, device=device)
    params = [np.random.rand(*param.shape).astype("float32") for _, param in param_spec]
    params = [rvm.nd.array(param, device=device) for param in params]
    out = vm["forward"](rvm_data, *params).numpy()
    w1, b1, w2, b2 = (p.numpy() for p in params)
    np.testing.assert_allclose(out, np.maximum(data @ w1.T + b1, 0) @ w2.T + b2, rtol=1e-4)


def test_attention_group_norm_split_and_tensor_expr_ops():
    def exp(t):
        return op.tensor_expr_op(topi.exp, "exp", [t])

    class Model(nn.Module):
        def __init__(self):
            self.norm = nn.GroupNorm(2, 4)

        def forward(self, q, k, v, img):
            attn = op.scaled_dot_product_attention(q, k, v, is_causal=True)
            left, right = op.split(self.norm(img), 2, axis=1)
            doubled = op.tensor_expr_op(lambda t: te.compute(t.shape, lambda *i: t(*i) * 2.0),
                                        "double", [left])
            summed = op.sum(op.concat([doubled, exp(right)], dim=1), axis=[2, 3])
            return attn, summed

    shapes = {"q": [1, 3, 2, 4], "k": [1, 3, 2, 4], "v": [1, 3, 2, 4], "img": [1, 4, 2, 2]}
    mod, params = Model().export_tvm(spec={"forward": {name: spec.Tensor(shape, "float32")
                                                       for name, shape in shapes.items()}})
    inputs = {name: rng.standard_normal(shape).astype("float32")
              for name, shape in shapes.items()}
    w = _random_params(params)
    results = [run(mod, *inputs.values(), *w.values(), func="forward", engine=e)
               for e in ("python", "native")]
    attn, summed = (r.numpy() for r in results[0])
    for a, b in zip(results[0], results[1]):
        np.testing.assert_array_equal(a.numpy(), b.numpy())

    q, k, v = (inputs[n].transpose(0, 2, 1, 3) for n in "qkv")
    scores = q @ k.transpose(0, 1, 3, 2) / 2.0 + np.triu(np.full((3, 3), -np.inf), 1)
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    np.testing.assert_allclose(attn, (probs @ v).transpose(0, 2, 1, 3), rtol=1e-5, atol=1e-6)
    img = inputs["img"].reshape(1, 2, 2, 2, 2)
    normed = (img - img.mean((2, 3, 4), keepdims=True)) / np.sqrt(
        img.var((2, 3, 4), keepdims=True) + 1e-5)
    normed = normed.reshape(1, 4, 2, 2) * w["norm.weight"][:, None, None] + \
        w["norm.bias"][:, None, None]
    expected = np.concatenate([normed[:, :2] * 2, np.exp(normed[:, 2:])], 1).sum((2, 3))
    np.testing.assert_allclose(summed, expected, rtol=1e-5, atol=1e-5)
