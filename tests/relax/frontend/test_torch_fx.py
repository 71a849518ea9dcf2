"""from_fx: torch.fx graphs of PyTorch models import as Relax modules that compute what torch
does; unsupported nodes are named with the supported set."""
import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.relax.frontend import detach_params
from rvm.relax.frontend.torch import GraphImportError, from_fx
from tests.relax.frontend.torch_models import MLP, assert_close, run_torch, seeded, torch

pytestmark = pytest.mark.frontend

fx = torch.fx


def _vm(mod):
    return relax.VirtualMachine(relax.build(mod), rvm.cpu())


def test_the_mlp_runs_any_batch_from_one_executable():
    model = seeded(MLP)
    mod = from_fx(fx.symbolic_trace(model), [(("n", 784), "float32")])
    vm = _vm(mod)
    for batch in (1, 7, 64):
        x = np.random.default_rng(batch).standard_normal((batch, 784)).astype("float32")
        assert_close(vm["main"](x).numpy(), run_torch(model, x))


def test_parameters_kept_as_inputs_detach_in_name_order():
    model = seeded(MLP)
    mod = from_fx(fx.symbolic_trace(model), [((2, 784), "float32")], keep_params_as_input=True)
    assert [p.name_hint for p in mod["main"].params] == [
        "inp_0", "fc1_bias", "fc1_weight", "fc2_bias", "fc2_weight"]
    assert mod["main"].attrs["num_input"] == 1
    mod, params = detach_params(mod)
    assert "params" not in mod["main"].attrs
    x = np.random.default_rng(0).standard_normal((2, 784)).astype("float32")
    assert_close(_vm(mod)["main"](x, *params["main"]).numpy(), run_torch(model, x))


class Functional(torch.nn.Module):
    def forward(self, x, y):
        a = torch.relu(x) + y * 2.0 - 1
        b = a.view(a.size(0), 3, -1).permute(0, 2, 1).contiguous()
        c = torch.transpose(b, 1, 2).reshape(-1, 12)
        d = torch.cat([c, torch.sigmoid(c)], dim=1).unsqueeze(1).squeeze(1)
        e, f = torch.split(d, [10, 14], dim=1)
        g = torch.nn.functional.softmax(e, dim=-1) @ torch.ones(10, 4)
        h = f.mean(dim=1, keepdim=True) + g.sum(-1, keepdim=True)
        return torch.tanh(h).expand(-1, 4) / torch.exp(g), torch.flatten(b, 1)


def test_functions_methods_and_operators():
    model = Functional()
    mod = from_fx(fx.symbolic_trace(model), [(("n", 12), "float32"), (("n", 12), "float32")])
    vm = _vm(mod)
    for batch in (1, 5):
        rng = np.random.default_rng(batch)
        x, y = (rng.standard_normal((batch, 12)).astype("float32") for _ in range(2))
        out = vm["main"](x, y)
        with torch.no_grad():
            expected = model(torch.from_numpy(x), torch.from_numpy(y))
        for got, want in zip(out, expected):
            assert_close(got.numpy(), want.numpy())


class Unsupported(torch.nn.Module):
    def forward(self, x):
        return torch.fft.fft(x)


def test_an_unsupported_node_is_named_with_the_supported_set():
    with pytest.raises(GraphImportError, match=r"node 'fft_fft' \(call_function .*fft.*\) is not "
                                               r"supported \(\d+ call_function targets are; README "
                                               r"lists them under 'PyTorch operators'\)"):
        from_fx(fx.symbolic_trace(Unsupported()), [((4,), "float32")])


def test_an_unsupported_module_is_named_with_the_supported_modules():
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.PixelShuffle(2))
    with pytest.raises(GraphImportError, match=r"node '_1' \(call_module 1: PixelShuffle\) is "
                                               r"not supported; supported modules: .*Linear"):
        from_fx(fx.symbolic_trace(model), [((1, 4), "float32")])


def test_bad_arguments_say_what_was_expected():
    traced = fx.symbolic_trace(seeded(MLP))
    with pytest.raises(TypeError, match="expects a torch.fx.GraphModule"):
        from_fx(seeded(MLP), [((1, 784), "float32")])
    with pytest.raises(TypeError, match=r"input_info\[0\] must be \(shape, dtype\)"):
        from_fx(traced, [(1, 784)])
    with pytest.raises(GraphImportError, match="input_info has 2 entries but the graph only 1"):
        from_fx(traced, [((1, 784), "float32"), ((1, 784), "float32")])
    with pytest.raises(GraphImportError, match="more inputs than input_info's 0 entries"):
        from_fx(traced, [])
    with pytest.raises(ValueError, match="unsupported torch dtype 'complex64'"):
        from_fx(traced, [((1, 784), "complex64")])
    with pytest.raises(GraphImportError, match=r"node 'fc1' .*matmul.*784.*5"):
        from_fx(traced, [((1, 5), "float32")])


def test_tvm_path_is_the_defining_package():
    import rvm.relax.frontend.torch

    assert relax.frontend.torch.from_fx is from_fx
    assert from_fx.__module__ == "rvm.relax.frontend.torch.fx_translator"
    assert relax.frontend.detach_params is detach_params
