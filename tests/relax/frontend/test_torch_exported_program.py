"""from_exported_program: torch.export programs import as Relax modules computing what torch
does, dynamic dimensions symbolic."""
import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.relax.frontend import detach_params
from rvm.relax.frontend.torch import from_exported_program
from rvm.relax.frontend.torch import GraphImportError
from rvm.ir.base import assert_structural_equal
from rvm.script import from_source
from tests.relax.frontend.torch_models import MLP, assert_close, run_torch, seeded, torch

pytestmark = pytest.mark.frontend


def _export(model, shape, dynamic=True):
    example = torch.randn(*shape)
    dims = {"x": {0: torch.export.Dim("batch", min=1, max=1024)}} if dynamic else None
    return torch.export.export(model, (example,), dynamic_shapes=dims)


def test_the_mlp_with_a_dynamic_batch():
    model = seeded(MLP)
    mod = from_exported_program(_export(model, (2, 784)))
    main = mod["main"]
    assert [p.name_hint for p in main.params] == ["x"]
    assert str(main.params[0].struct_info_.shape_values[0]).startswith("s")
    vm = relax.VirtualMachine(relax.build(mod), rvm.cpu())
    for batch in (1, 7, 64):
        x = np.random.default_rng(batch).standard_normal((batch, 784)).astype("float32")
        (out,) = vm["main"](x)
        assert_close(out.numpy(), run_torch(model, x))


def test_parameters_as_inputs_unwrapped_result_and_printing():
    model = seeded(MLP)
    mod = from_exported_program(_export(model, (3, 784), dynamic=False),
                                keep_params_as_input=True, unwrap_unit_return_tuple=True)
    assert [p.name_hint for p in mod["main"].params] == [
        "x", "p_fc1_weight", "p_fc1_bias", "p_fc2_weight", "p_fc2_bias"]
    text = mod.script(show_meta=True)
    assert 'metadata["runtime.NDArray"][3]' in text
    assert_structural_equal(from_source(text), mod)
    mod, params = detach_params(mod)
    x = np.random.default_rng(0).standard_normal((3, 784)).astype("float32")
    out = relax.VirtualMachine(relax.build(mod), rvm.cpu())["main"](x, *params["main"])
    assert_close(out.numpy(), run_torch(model, x))


class Sizes(torch.nn.Module):
    def forward(self, x):
        n = x.shape[0]
        y = x.view(n * 2, -1).transpose(0, 1)
        return (y.reshape(x.shape[1] // 2, n, 2) * 3).sum(dim=2), torch.nn.functional.gelu(x)


def test_symbolic_sizes_and_several_results():
    model = Sizes()
    mod = from_exported_program(_export(model, (4, 6)))
    vm = relax.VirtualMachine(relax.build(mod), rvm.cpu())
    for batch in (1, 5):
        x = np.random.default_rng(batch).standard_normal((batch, 6)).astype("float32")
        got = vm["main"](x)
        with torch.no_grad():
            want = model(torch.from_numpy(x))
        assert len(got) == 2
        for a, b in zip(got, want):
            assert_close(a.numpy(), b.numpy())


class Unsupported(torch.nn.Module):
    def forward(self, x):
        return torch.cumprod(x, 0)


def test_errors_name_the_node_and_the_supported_operators():
    with pytest.raises(GraphImportError, match=r"node 'cumprod' \(call_function "
                                               r"aten.cumprod.default\) in the top module "
                                               r"\(Unsupported\) is not supported \(\d+ "
                                               r"call_function targets are; README lists"):
        from_exported_program(_export(Unsupported(), (4,), dynamic=False))
    with pytest.raises(TypeError, match="expects a torch.export.ExportedProgram"):
        from_exported_program(seeded(MLP))


class _Tokens(torch.nn.Module):
    def forward(self, x):  # MobileViT's unfolding: a reshape to -1 of a symbolic batch
        return x.reshape(x.shape[0] * 4, -1) + x.reshape(x.shape[0] * 4, 8)


def test_a_reshape_to_minus_one_takes_the_compound_shape_torch_proved():
    mod = from_exported_program(_export(_Tokens(), (2, 4, 8)), unwrap_unit_return_tuple=True)
    batch = mod["main"].params[0].struct_info_.shape_values[0]
    shape = mod["main"].ret_struct_info.shape_values  # (batch * 128) // (batch * 4) is 8
    assert shape is not None and str(shape[0]) == f"T.int64(4) * {batch}" and \
        shape[1].value == 8
    vm = relax.VirtualMachine(relax.build(mod), rvm.cpu())
    for n in (1, 3):
        x = np.random.default_rng(n).standard_normal((n, 4, 8)).astype("float32")
        assert_close(vm["main"](x).numpy(), _Tokens()(torch.from_numpy(x)).numpy())
