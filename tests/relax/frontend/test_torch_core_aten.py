"""from_exported_program: the core ATen forms run_decompositions() leaves and the further
operators of converters_core, each matching torch at two symbolic lengths, in the program
torch.export gives and after run_decompositions(); bad uses refused naming the node."""
import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.relax.frontend.torch import GraphImportError, from_exported_program
from tests.relax.frontend.torch_models import torch

pytestmark = pytest.mark.frontend


class Fn(torch.nn.Module):
    def __init__(self, fn, module=None):
        super().__init__()
        self.fn = fn
        self.module = module

    def forward(self, x):
        return self.fn(self, x)


_CONV = torch.nn.Conv2d(4, 4, 3, padding=1, groups=4)  # depthwise
_NORM = torch.nn.LayerNorm(3)
_GROUP = torch.nn.GroupNorm(2, 4)
_INDEX = torch.tensor([2, 0, 1, 1])

# name: (function of (module, x), x's trailing shape, dtype); x is (n, *shape), n symbolic
CASES = {
    "index_select": (lambda m, x: torch.index_select(x, 1, _INDEX[:2]), (3,), "float32"),
    "gather": (lambda m, x: torch.gather(x, 1, (x > 0).to(torch.int64) * 2), (3,), "float32"),
    "index_tensor": (lambda m, x: x[:, _INDEX], (3,), "float32"),
    # two index tensors broadcast together, over a symbolic axis (a padding mask read at
    # (batch, position), as transformers' masks do)
    "index_two_tensors": (lambda m, x: x[torch.arange(x.shape[0])[:, None], _INDEX[None, :3]]
                          + x[:, _INDEX[:2], None][torch.arange(x.shape[0]), 1:, 0],
                          (3,), "float32"),
    "index_three_tensors_with_trailing_axes": (
        lambda m, x: x[:, _INDEX[:2], _INDEX[1:3], _INDEX[0:2]], (3, 3, 3, 2), "float32"),
    "unbind": (lambda m, x: sum(torch.unbind(x, 1)), (3,), "float32"),
    "cumsum": (lambda m, x: torch.cumsum(x, 0) + torch.cumsum(x > 0, 1), (3,), "float32"),
    "var": (lambda m, x: torch.var(x, 1, keepdim=True) + torch.var(x, 1, unbiased=False,
                                                                   keepdim=True), (3,),
            "float32"),
    "baddbmm": (lambda m, x: torch.baddbmm(x, x, x.transpose(1, 2), beta=0.5, alpha=2.0),
                (3, 3), "float32"),
    "hardswish_hardsigmoid": (lambda m, x: torch.nn.functional.hardswish(x)
                              + torch.nn.functional.hardsigmoid(x), (3,), "float32"),
    "any_all_logical": (lambda m, x: ((x > 0).any(1, keepdim=True) & ~(x < 1).all(1, True))
                        .logical_or(x > 2).to(torch.float32), (3,), "float32"),
    "numel": (lambda m, x: x * x[0].numel(), (3,), "float32"),
    "depthwise_conv_pool": (lambda m, x: torch.nn.functional.max_pool2d(_CONV(x), 2, 2),
                            (4, 6, 6), "float32"),
    "layer_norm": (lambda m, x: _NORM(x), (3,), "float32"),
    "group_norm": (lambda m, x: _GROUP(x), (4, 2, 2), "float32"),
}


def _export(fn, shape, dtype, core_aten):
    example = torch.ones(5, *shape, dtype=getattr(torch, dtype))
    dims = {"x": {0: torch.export.Dim("n", min=2, max=64)}}
    program = torch.export.export(Fn(fn), (example,), dynamic_shapes=dims)
    return program.run_decompositions() if core_aten else program


@pytest.mark.parametrize("core_aten", [False, True], ids=["export", "core_aten"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_operator_matches_torch_at_two_lengths(name, core_aten):
    fn, shape, dtype = CASES[name]
    mod = from_exported_program(_export(fn, shape, dtype, core_aten),
                                unwrap_unit_return_tuple=True)
    vm = relax.VirtualMachine(relax.build(mod), rvm.cpu())
    for n in (3, 7):
        x = (np.random.default_rng(n).standard_normal((n,) + shape) * 3).astype(dtype)
        with torch.no_grad():
            expected = fn(None, torch.from_numpy(x)).numpy()
        actual = vm["main"](x).numpy()
        assert actual.dtype == expected.dtype, name
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5, err_msg=name)


def test_index_tensors_on_axes_apart_are_refused_naming_the_node():
    rows = torch.tensor([0, 1])
    with pytest.raises(GraphImportError, match=r"node 'index\w*' \(call_function "
                                               r"aten.index.Tensor\) in the top module \(Fn\): "
                                               r"index: the index tensors must be on adjacent "
                                               r"axes \(x\[:, i, j\]\), got them on axes "
                                               r"\[0, 2\]"):
        from_exported_program(_export(lambda m, x: x[rows, :, rows], (3, 3), "float32", False))


def test_a_transposed_convolution_is_refused_naming_the_node():
    deconv = torch.nn.ConvTranspose2d(4, 4, 2)
    with pytest.raises(GraphImportError, match=r"\(call_function aten.convolution.default\)"
                                               r".*only 2-D convolution"):
        from_exported_program(_export(lambda m, x: deconv(x), (4, 3, 3), "float32", True))


@pytest.mark.parametrize("fn, dtype", [
    (lambda m, x: x * x.numel(), "float32"), (lambda m, x: x * x.size(0), "float32"),
    (lambda m, x: x / x.size(0), "int32"), (lambda m, x: x.size(0) - x, "int64"),
    (lambda m, x: x // x.size(0), "float32")], ids=["numel", "size", "div", "rsub", "floordiv"])
def test_a_tensor_combined_with_a_symbolic_size_matches_torch(fn, dtype):
    """x.size(0) is a Python int to torch: the tensor keeps its dtype (an int tensor divided
    by it becomes float32), at every length."""
    mod = from_exported_program(_export(fn, (3,), dtype, False), unwrap_unit_return_tuple=True)
    vm = relax.VirtualMachine(relax.build(mod), rvm.cpu())
    for n in (3, 7):
        x = (np.random.default_rng(n).standard_normal((n, 3)) * 9 + 1).astype(dtype)
        with torch.no_grad():
            expected = fn(None, torch.from_numpy(x)).numpy()
        actual = vm["main"](x).numpy()
        assert actual.dtype == expected.dtype
        np.testing.assert_allclose(actual, expected, rtol=1e-6)