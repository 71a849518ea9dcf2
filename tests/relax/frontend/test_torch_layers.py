"""torch.nn layers and functions one by one: what the importers make computes what torch does."""
import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.relax.frontend.torch import from_exported_program, from_fx
from rvm.relax.frontend.torch import GraphImportError
from tests.relax.frontend.torch_models import assert_close, torch

pytestmark = pytest.mark.frontend

nn = torch.nn
F = torch.nn.functional


def _inputs(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype("float32") if isinstance(s, tuple) else s
            for s in shapes]


class Wrap(nn.Module):
    """A layer as a submodule, so that torch.fx records it as a call_module node."""

    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, x):
        return self.layer(x)


class WrapAttention(Wrap):
    def forward(self, q, k, v):
        return self.layer(q, k, v)


def _check(model, shapes, importer="fx"):
    model = model.eval()
    args = _inputs(shapes)
    if importer == "fx":
        info = [(a.shape, str(a.dtype)) for a in args]
        mod = from_fx(torch.fx.symbolic_trace(model), info)
    else:
        mod = from_exported_program(torch.export.export(
            model, tuple(torch.from_numpy(a) for a in args)))
    got = relax.VirtualMachine(relax.build(mod), rvm.cpu())["main"](*args)
    with torch.no_grad():
        want = model(*(torch.from_numpy(a) for a in args))
    got = [got] if isinstance(got, rvm.nd.NDArray) else list(got)
    want = list(want) if isinstance(want, (list, tuple)) else [want]
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert_close(a.numpy(), b.numpy())


LAYERS = {
    "conv_strided_grouped": (nn.Conv2d(4, 6, 3, stride=2, padding=1, groups=2), [(2, 4, 9, 9)]),
    "conv_same_dilated": (nn.Conv2d(3, 5, 3, padding="same", dilation=2, bias=False),
                          [(1, 3, 8, 8)]),
    "batch_norm": (nn.BatchNorm2d(3), [(2, 3, 5, 5)]),
    "layer_norm": (nn.LayerNorm([4, 6]), [(2, 4, 6)]),
    "group_norm": (nn.GroupNorm(2, 4), [(2, 4, 3, 3)]),
    "max_pool_ceil": (nn.MaxPool2d(3, stride=2, ceil_mode=True), [(1, 2, 8, 8)]),
    "avg_pool": (nn.AvgPool2d(2, padding=1, count_include_pad=False), [(1, 2, 5, 5)]),
    "adaptive_avg_pool": (nn.AdaptiveAvgPool2d((1, 1)), [(2, 3, 6, 6)]),
    "softmax": (nn.Softmax(dim=1), [(3, 5)]),
    "log_softmax": (nn.LogSoftmax(dim=-1), [(3, 5)]),
    "gelu_tanh": (nn.GELU(approximate="tanh"), [(3, 5)]),
    "silu_tanh_sigmoid": (nn.Sequential(nn.SiLU(), nn.Tanh(), nn.Sigmoid()), [(3, 5)]),
    "flatten_identity": (nn.Sequential(nn.Flatten(), nn.Identity()), [(2, 3, 4)]),
    "mha_seq_first_weights": (nn.MultiheadAttention(8, 2), [(5, 2, 8), (5, 2, 8), (5, 2, 8)]),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layers(name):
    torch.manual_seed(0)
    model, shapes = LAYERS[name]
    if name == "batch_norm":
        model.running_mean.uniform_(-1, 1)
        model.running_var.uniform_(0.5, 2)
    _check((WrapAttention if len(shapes) == 3 else Wrap)(model), shapes)


def test_embedding():
    torch.manual_seed(0)
    model = nn.Embedding(10, 4).eval()
    idx = np.array([[1, 2, 9], [0, 0, 3]], "int64")
    mod = from_fx(torch.fx.symbolic_trace(model), [((2, 3), "int64")])
    got = relax.VirtualMachine(relax.build(mod), rvm.cpu())["main"](idx).numpy()
    assert_close(got, model(torch.from_numpy(idx)).detach().numpy())


class MaskedAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)

    def forward(self, x, pad):
        mask = torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1)
        out, weights = self.attn(x, x, x, key_padding_mask=pad, attn_mask=mask,
                                 average_attn_weights=False)
        return out, weights


def test_attention_with_masks_and_per_head_weights():
    torch.manual_seed(0)
    model = MaskedAttention().eval()
    x = np.random.default_rng(0).standard_normal((2, 4, 8)).astype("float32")
    pad = np.array([[False, False, False, True], [False, False, False, False]])
    mod = from_fx(torch.fx.symbolic_trace(model), [((2, 4, 8), "float32"), ((2, 4), "bool")])
    out, weights = relax.VirtualMachine(relax.build(mod), rvm.cpu())["main"](x, pad)
    with torch.no_grad():
        want_out, want_weights = model(torch.from_numpy(x), torch.from_numpy(pad))
    assert_close(out.numpy(), want_out.numpy())
    assert_close(weights.numpy(), want_weights.numpy())


class Indexing(nn.Module):
    def forward(self, x, q):
        a = x[:, 1:3, None, ...] * 2
        b = x[0] + x[..., -1].unsqueeze(-1)
        c = F.scaled_dot_product_attention(q, q, q, is_causal=True)
        return a, b, torch.select(x, 1, -1), c


@pytest.mark.parametrize("importer", ["fx", "exported_program"])
def test_indexing_and_causal_attention(importer):
    _check(Indexing(), [(2, 4, 5), (1, 2, 3, 4)], importer)


def test_a_model_in_training_mode_is_refused():
    model = nn.Sequential(nn.BatchNorm2d(3)).train()
    with pytest.raises(GraphImportError, match=r"node '_0' .*recorded in training mode; call "
                                               r"model.eval\(\)"):
        from_fx(torch.fx.symbolic_trace(model), [((2, 3, 4, 4), "float32")])


def test_unsupported_layer_options_say_so():
    conv = nn.Conv2d(1, 1, 3, padding=1, padding_mode="reflect")
    with pytest.raises(GraphImportError, match="padding_mode='reflect' is not supported"):
        from_fx(torch.fx.symbolic_trace(nn.Sequential(conv)), [((1, 1, 4, 4), "float32")])
