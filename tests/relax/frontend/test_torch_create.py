"""from_exported_program: the creation and masking operators transformer models build their
masks and positions with, on a symbolic length, each matching torch at two lengths."""
import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.relax.frontend.torch import GraphImportError, from_exported_program
from tests.relax.frontend.torch_models import torch

pytestmark = pytest.mark.frontend


class Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def _no_grad_region(x):
    with torch.no_grad():
        y = x * 2
    return y + 1


# name: (function of x, x's dtype); x has the shape (n, 3) with n symbolic
CASES = {
    "arange": (lambda x: x + torch.arange(x.shape[0]).unsqueeze(1), "float32"),
    "arange_start_float": (lambda x: x * torch.arange(1, x.shape[0] + 1,
                                                      dtype=torch.float32)[:, None], "float32"),
    "full": (lambda x: x + torch.full((x.shape[0], 3), -2.5), "float32"),
    "ones_zeros": (lambda x: torch.ones(x.shape[0], 3) * x + torch.zeros(x.shape[0], 1),
                   "float32"),
    "new_ones_new_zeros": (lambda x: x.new_ones((x.shape[0], 3)) - x.new_zeros(1, 3) + x,
                           "float32"),
    "like": (lambda x: torch.full_like(x, 3.0) * x + torch.ones_like(x) - torch.zeros_like(x),
             "float32"),
    "triu": (lambda x: torch.triu(x, diagonal=1), "float32"),
    "tril": (lambda x: torch.tril(x, -1) + torch.triu(torch.full((x.shape[0], x.shape[0]),
                                                                 -9.0), 1).sum(1, True),
             "float32"),
    "where_scalar": (lambda x: torch.where(x > 0, x, 0.5), "float32"),
    "masked_fill": (lambda x: x.masked_fill(x < 0, -1e4), "float32"),
    "rsub": (lambda x: 1.0 - x, "float32"),
    "type_as_and_int64": (lambda x: x.type_as(torch.ones(1, dtype=torch.float32)) * 2,
                          "int64"),
    "bool_times_float": (lambda x: (x > 0) * x + (x < 0).to(torch.float32), "float32"),
    "min_max_of_two": (lambda x: torch.min(x, x * 2) + torch.max(x, -x), "float32"),
    "no_grad_region": (_no_grad_region, "float32"),
    "vmap_region": (lambda x: torch.vmap(lambda r: r * r.sum())(x), "float32"),
    # a clamped slice of a concat: Relax infers max(min(1, n) + n - min(...), 0) columns,
    # torch proves n, and the importer takes torch's shape (checked) so the difference keeps
    # a shape the matmul can be built with
    "slice_settled_to_torch_shape": (
        lambda x: (torch.cat([x.T[:, :1], x.T], 1)[:, 1:] - x.T) @ x, "float32"),
    # attention over a symbolic length: causal, and with a bool and a float mask
    "sdpa_causal": (lambda x: torch.nn.functional.scaled_dot_product_attention(
        x[None], x[None], x[None], is_causal=True)[0], "float32"),
    "sdpa_masks": (lambda x: torch.nn.functional.scaled_dot_product_attention(
        x[None], x[None], x[None], attn_mask=torch.tril(torch.ones(
            x.shape[0], x.shape[0], dtype=torch.bool)))[0]
        + torch.nn.functional.scaled_dot_product_attention(
            x[None], x[None], x[None], attn_mask=torch.triu(torch.full(
                (x.shape[0], x.shape[0]), -1e9), 1))[0], "float32"),
}


def _export(fn, dtype):
    example = torch.ones(5, 3, dtype=getattr(torch, dtype))
    dims = {"x": {0: torch.export.Dim("n", min=2, max=64)}}
    return torch.export.export(Fn(fn), (example,), dynamic_shapes=dims)


@pytest.mark.parametrize("name", sorted(CASES))
def test_operator_matches_torch_at_two_lengths(name):
    fn, dtype = CASES[name]
    mod = from_exported_program(_export(fn, dtype), unwrap_unit_return_tuple=True)
    vm = relax.VirtualMachine(relax.build(mod), rvm.cpu())
    for n in (3, 11):
        x = np.random.default_rng(n).standard_normal((n, 3)) * 4
        x = x.astype(dtype)
        with torch.no_grad():
            expected = fn(torch.from_numpy(x)).numpy()
        actual = vm["main"](x).numpy()
        assert actual.dtype == expected.dtype, name
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6, err_msg=name)


def test_arange_keeps_the_symbolic_length_in_struct_info():
    mod = from_exported_program(_export(CASES["arange"][0], "float32"))
    sinfos = [b.var.struct_info_ for block in mod["main"].body.blocks
              for b in block.bindings]
    assert any(str(s.shape_values[0]).startswith("s") and s.dtype == "int64"
               for s in sinfos if getattr(s, "ndim", 0) == 1)


def test_a_compound_dimension_takes_the_shape_torch_proved():
    mod = from_exported_program(_export(CASES["slice_settled_to_torch_shape"][0], "float32"),
                                unwrap_unit_return_tuple=True)
    bindings = [b for block in mod["main"].body.blocks for b in block.bindings]
    casts = [b for b in bindings if type(b).__name__ == "MatchCast"]
    assert [[getattr(d, "value", None) for d in c.struct_info.shape_values] for c in casts] \
        == [[3, 1]]  # x.T[:, :1]: min(1, n) columns in Relax, 1 in torch (n >= 2)
    assert [getattr(d, "value", None) for d in bindings[-1].var.struct_info_.shape_values] == \
        [3, 3]


def test_min_over_a_dimension_is_refused_with_the_node_named():
    with pytest.raises(GraphImportError, match=r"node 'min\w*' \(call_function aten.min.dim\) in "
                                               r"the top module \(Fn\): min/max over a "
                                               r"dimension"):
        from_exported_program(_export(lambda x: torch.min(x, 0)[0], "float32"))


def test_the_readme_lists_every_operator_the_importers_convert():
    from pathlib import Path

    from rvm.relax.frontend.torch.converters import CONVERTERS

    text = Path(__file__).resolve().parents[3].joinpath("README.md").read_text()
    section = text.split("## PyTorch operators", 1)[1].split("\n## ", 1)[0]
    listed = {w.strip("`,. \n") for w in section.split("`")[1::2]}
    claimed = {n for n in CONVERTERS if not n.startswith(("__", "functional_"))}
    assert not claimed - listed, sorted(claimed - listed)


@pytest.mark.parametrize("engine", ["python", "native"])
def test_a_length_beyond_the_exported_maximum_is_refused_by_name(engine):
    table = torch.arange(64, dtype=torch.float32).reshape(64, 1)

    def lookup(x):  # a position table sliced to the length, as GPT-2 and BERT do
        return x + table[:x.shape[0]]

    mod = from_exported_program(_export(lookup, "float32"), unwrap_unit_return_tuple=True)
    vm = relax.VirtualMachine(relax.build(mod), rvm.cpu(), engine=engine)
    x = np.ones((64, 3), "float32")
    np.testing.assert_allclose(vm["main"](x).numpy(), x + table.numpy())
    with pytest.raises(AssertionError, match=r"main: input 'x' has 65 at axis 0 \(s\w+\); the "
                                             r"exported program allows at most 64"):
        vm["main"](np.ones((65, 3), "float32"))
