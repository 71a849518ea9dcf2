"""Every operator README lists under 'PyTorch operators', one table-driven case each: the
imported function's struct info (shape and dtype, with a symbolic length ``n`` where the
operator keeps it) against torch's outputs at two lengths, and the values after one
relax.build of all cases against torch eager. The table's names are README's list, no
more and no fewer; test_torch_aten_errors.py has each operator's refused input."""
import operator
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.ir.expr import GlobalVar
from rvm.ir.module import IRModule
from rvm.relax.frontend.torch import from_exported_program, from_fx
from rvm.relax.frontend.torch.exported_program_translator import operator_name
from rvm.relax.struct_info import TupleStructInfo
from rvm.tir.arith import simplify
from rvm.tir.expr import IntImm, Var as TirVar
from rvm.tir.stmt_functor import substitute
from tests.relax.frontend.torch_models import torch

pytestmark = pytest.mark.frontend
F = torch.nn.functional

X = (("n", 3), "float32")  # an input: (shape, dtype); "n" is the symbolic length
I64 = ((3,), "int64")
LENGTHS = (3, 5)
IDX = torch.tensor([2, 0, 1])
W23 = torch.arange(6, dtype=torch.float32).reshape(2, 3) / 6


class Case:
    """``fn`` applied to the inputs, imported ``via`` "export" (torch.export.export),
    "core" (then run_decompositions()), "fx" (symbolic_trace) or "graph" (an fx graph of
    the one call ``fn(x, 2)``, as torch.compile records ``x += 2``); ``values``: whether
    the results' values are defined (not for ``empty``)."""

    def __init__(self, fn, *inputs, via="export", values=True):
        self.fn, self.inputs, self.via, self.values = fn, inputs or (X,), via, values


def C(fn, *inputs, **kw):
    return Case(fn, *inputs, **kw)


def FX(fn, *inputs, **kw):
    return Case(fn, *inputs, via="fx", **kw)


def CORE(fn, *inputs, **kw):
    return Case(fn, *inputs, via="core", **kw)


def _pool(x):
    return x.reshape(-1, 1, 3, 1)


CASES = {
    "_adaptive_avg_pool2d": CORE(lambda x: torch.ops.aten._adaptive_avg_pool2d(_pool(x), [1, 1])),
    "_assert_async": C(lambda x: torch.ops.aten._assert_async.msg(x.sum() > -1e9, "m") or x),
    "_assert_scalar": C(lambda x: torch.ops.aten._assert_scalar(x.shape[0] > 1, "m") or x),
    "_assert_tensor_metadata": C(lambda x: x.to(torch.float64)),
    "_log_softmax": CORE(lambda x: torch.log_softmax(x, 1)),
    "_native_batch_norm_legit_no_training": CORE(
        lambda x: F.batch_norm(x, torch.zeros(3), torch.ones(3) * 2, W23[0], W23[1])),
    "_softmax": CORE(lambda x: torch.softmax(x, -1)),
    "_to_copy": CORE(lambda x: x.to(torch.int32)),
    "_unsafe_view": C(lambda x: torch.ops.aten._unsafe_view(x, [-1])),
    "abs": C(torch.abs),
    "adaptive_avg_pool2d": C(lambda x: F.adaptive_avg_pool2d(_pool(x), (1, 1))),
    "add": C(lambda x: torch.add(x, x, alpha=2)),
    "add_": C(lambda x: x.clone().add_(1)),
    "addmm": C(lambda x: torch.addmm(W23[1, :2], x, W23.T, beta=0.5)),
    "alias": C(lambda x: torch.ops.aten.alias(x)),
    "all": C(lambda x: (x > -1).all(1)),
    "alpha_dropout": C(lambda x: F.alpha_dropout(x, 0.5, False)),
    "amax": C(lambda x: x.amax(1, keepdim=True)),
    "amin": C(lambda x: x.amin(0)),
    "and_": FX(lambda x: (x > 0) & (x < 1)),
    "any": C(lambda x: (x > 1).any(1)),
    "arange": C(lambda x: torch.arange(x.shape[0]) * 2),
    "avg_pool2d": C(lambda x: F.avg_pool2d(_pool(x), (2, 1), 1)),
    "baddbmm": C(lambda x: torch.baddbmm(x[None], x[None], W23.T[None] @ W23[None], alpha=2)),
    "batch_norm": C(lambda x: F.batch_norm(x, W23[1], W23[0] + 1)),
    "bitwise_and": C(lambda x: torch.bitwise_and(x > 0, x < 1)),
    "bitwise_not": C(lambda x: torch.bitwise_not(x > 0)),
    "bitwise_or": C(lambda x: torch.bitwise_or(x > 0, x < -1)),
    "bmm": C(lambda x: torch.bmm(x[None], x.T[None])),
    "bool": FX(lambda x: x.bool()),
    "broadcast_to": C(lambda x: torch.broadcast_to(x, (2, x.shape[0], 3))),
    "cat": C(lambda x: torch.cat([x, x * 2], 1)),
    "chunk": C(lambda x: x.chunk(3, 1)[1]),
    "clamp": C(lambda x: torch.clamp(x, -0.5)),
    "clip": C(lambda x: torch.clip(x, -0.5, 0.5)),
    "clone": C(lambda x: x.clone() + 1),
    "concat": C(lambda x: torch.concat([x, x])),
    "concatenate": C(lambda x: torch.concatenate([x, -x], 1)),
    "contiguous": FX(lambda x: x.contiguous()),
    "conv2d": C(lambda x: F.conv2d(x.reshape(-1, 3, 1, 1), W23.reshape(2, 3, 1, 1), W23[0, :2])),
    "convolution": CORE(lambda x: F.conv2d(x.reshape(-1, 1, 1, 3), W23.reshape(2, 1, 1, 3),
                                           padding=(0, 1))),
    "copy_": C(lambda x: x.clone().copy_(x[:1] * 2)),
    "cos": C(torch.cos),
    "cumsum": C(lambda x: torch.cumsum(x, 0)),
    "detach": C(lambda x: x.detach()),
    "detach_": C(lambda x: x.detach().detach_()),
    "div": C(lambda x: torch.div(x, 2, rounding_mode="floor")),
    "div_": C(lambda x: x.clone().div_(2)),
    "divide": C(lambda x: torch.divide(x, 3)),
    "double": FX(lambda x: x.double()),
    "dropout": C(lambda x: F.dropout(x, 0.5, False)),
    "dropout_": C(lambda x: F.dropout(x.clone(), 0.5, False, True)),
    "embedding": C(lambda i: F.embedding(i, W23.T), I64),
    "empty": C(lambda x: torch.empty(x.shape[0], 2), values=False),
    "empty_like": C(lambda x: torch.empty_like(x), values=False),
    "eq": C(lambda x: (x > 0).eq(x < 1)),
    "erf": C(torch.erf),
    "exp": C(torch.exp),
    "expand": C(lambda x: x[:, :1].expand(-1, 4)),
    "expand_as": C(lambda x: x[:1].expand_as(x)),
    "feature_dropout": C(lambda x: torch.feature_dropout(x, 0.5, False)),
    "flatten": C(lambda x: torch.flatten(x)),
    "float": FX(lambda x: x.float(), I64),
    "floor_divide": C(lambda x: torch.floor_divide(x, 0.5)),
    "floordiv": FX(lambda x: x // 2),
    "full": C(lambda x: torch.full((2, x.shape[0]), 1.5)),
    "full_like": C(lambda x: torch.full_like(x, 7)),
    "gather": C(lambda x: torch.gather(x, 1, (x > 0).long() * 2)),
    "ge": C(lambda x: x.ge(0)),
    "gelu": C(lambda x: F.gelu(x, approximate="tanh")),
    "getattr": FX(lambda x: x.reshape(x.shape[1], -1)),
    "getitem": C(lambda x: x.split(1, 1)[2]),
    "group_norm": C(lambda x: F.group_norm(x[..., None], 3, W23[0], W23[1])),
    "gt": C(lambda x: x.gt(x.T[:1].T)),
    "half": FX(lambda x: x.half()),
    "hardsigmoid": C(F.hardsigmoid),
    "hardsigmoid_": C(lambda x: F.hardsigmoid(x.clone(), inplace=True)),
    "hardswish": C(F.hardswish),
    "hardswish_": C(lambda x: F.hardswish(x.clone(), inplace=True)),
    "hardtanh": C(lambda x: F.hardtanh(x, -0.5, 0.25)),
    "iadd": Case(operator.iadd, via="graph"),
    "imul": Case(operator.imul, via="graph"),
    "index": C(lambda x: x[:, IDX[:2]]),
    "index_select": C(lambda x: torch.index_select(x, 1, IDX)),
    "int": FX(lambda x: x.int()),
    "isub": Case(operator.isub, via="graph"),
    "layer_norm": C(lambda x: F.layer_norm(x, (3,), W23[0], W23[1])),
    "le": C(lambda x: x.le(0)),
    "lift_fresh_copy": C(lambda x: x + torch.tensor(1.0)),
    "linear": C(lambda x: F.linear(x, W23, W23[1, :2])),
    "log": C(lambda x: torch.log(x.abs() + 0.5)),
    "log_softmax": C(lambda x: torch.log_softmax(x, 0)),
    "logical_and": C(lambda x: torch.logical_and(x, x > 0)),
    "logical_not": C(lambda x: torch.logical_not(x)),
    "logical_or": C(lambda x: torch.logical_or(x > 1, x < -1)),
    "long": FX(lambda x: x.long()),
    "lt": C(lambda x: x.lt(0.5)),
    "masked_fill": C(lambda x: x.masked_fill(x > 0, -1.0)),
    "masked_fill_": C(lambda x: x.clone().masked_fill_(x > 0, 1.0)),
    "matmul": C(lambda x: x @ x.T),
    "max": C(lambda x: torch.max(x, x * 0.5)),
    "max_pool2d": C(lambda x: F.max_pool2d(_pool(x), (2, 1), 1)),
    "max_pool2d_with_indices": CORE(lambda x: F.max_pool2d(_pool(x), (2, 1))),
    "maximum": C(lambda x: torch.maximum(x, -x)),
    "mean": C(lambda x: x.mean(1)),
    "min": C(lambda x: x.min()),
    "minimum": C(lambda x: torch.minimum(x, -x)),
    "mm": C(lambda x: torch.mm(x, x.T)),
    "mul": C(lambda x: x * (x > 0)),
    "mul_": C(lambda x: x.clone().mul_(2)),
    "multiply": C(lambda x: torch.multiply(x, 2)),
    "native_group_norm": CORE(lambda x: F.group_norm(x[..., None], 3)),
    "native_layer_norm": CORE(lambda x: F.layer_norm(x, (3,))),
    "ne": C(lambda x: x.ne(x * (x > 0))),
    "neg": C(lambda x: -x),
    "negative": C(torch.negative),
    "new_empty": C(lambda x: x.new_empty(x.shape[0]), values=False),
    "new_full": C(lambda x: x.new_full((x.shape[0],), 2.0)),
    "new_ones": C(lambda x: x.new_ones(3, dtype=torch.int64)),
    "new_zeros": C(lambda x: x.new_zeros((2, x.shape[0]))),
    "numel": FX(lambda x: x.reshape(x.numel())),
    "numpy_T": C(lambda x: x.T),
    "ones": C(lambda x: torch.ones(x.shape[0], 2) + 1),
    "ones_like": C(lambda x: torch.ones_like(x, dtype=torch.int32)),
    "or_": FX(lambda x: (x > 1) | (x < -1)),
    "permute": C(lambda x: x[None].permute(2, 0, 1)),
    "pow": C(lambda x: torch.pow(x, 2)),
    "relu": C(torch.relu),
    "relu_": C(lambda x: F.relu(x.clone(), inplace=True)),
    "reshape": C(lambda x: x.reshape(-1, 1)),
    "rsqrt": C(lambda x: torch.rsqrt(x.abs() + 1)),
    "rsub": C(lambda x: 1 - x),
    "scalar_tensor": C(lambda x: torch.scalar_tensor(2.5) * x),
    "scaled_dot_product_attention": C(
        lambda x: F.scaled_dot_product_attention(x[None], x[None], x[None], is_causal=True)),
    "select": C(lambda x: x[:, 1]),
    "sigmoid": C(torch.sigmoid),
    "silu": C(F.silu),
    "silu_": C(lambda x: F.silu(x.clone(), inplace=True)),
    "sin": C(torch.sin),
    "size": FX(lambda x: x.reshape(x.size(1), x.size(0))),
    "slice": C(lambda x: x[:, 1:]),
    "softmax": C(lambda x: torch.softmax(x, 1)),
    "split": C(lambda x: x.split(2, 1)[1]),
    "split_with_sizes": C(lambda x: x.split([1, 2], 1)[1]),
    "sqrt": C(lambda x: torch.sqrt(x.abs())),
    "square": C(torch.square),
    "squeeze": C(lambda x: torch.squeeze(x[:, :1], 1)),
    "stack": C(lambda x: torch.stack([x, x * 2], 1)),
    "sub": C(lambda x: torch.sub(x, 1.5, alpha=2)),
    "sub_": C(lambda x: x.clone().sub_(1)),
    "subtract": C(lambda x: torch.subtract(x, x * x)),
    "sum": C(lambda x: (x > 0).sum(1)),
    "swapaxes": C(lambda x: torch.swapaxes(x, 0, 1)),
    "sym_constrain_range": FX(
        lambda x: (torch.ops.aten.sym_constrain_range(x.size(0), min=2, max=64), x)[1]),
    "sym_constrain_range_for_size": FX(
        lambda x: (torch.ops.aten.sym_constrain_range_for_size(x.size(0), min=2, max=64),
                   x)[1]),
    "sym_numel": C(lambda x: x.reshape(x.numel())),
    "sym_size": C(lambda x: x.reshape(x.size(0), 3, 1)),
    "t": C(lambda x: x.t()),
    "tanh": C(torch.tanh),
    "to": C(lambda x: x.to(torch.int64)),
    "transpose": C(lambda x: x.transpose(0, 1)),
    "tril": C(lambda x: torch.tril(x, -1)),
    "triu": C(lambda x: torch.triu(x, 1)),
    "truediv": FX(lambda x: x / 4),
    "type": FX(lambda x: x.type(torch.float64)),
    "type_as": C(lambda x: x.type_as(x)),
    "unbind": C(lambda x: x.unbind(1)[0]),
    "unflatten": C(lambda x: x.unflatten(1, (3, 1))),
    "unsqueeze": C(lambda x: x.unsqueeze(-1)),
    "var": C(lambda x: torch.var(x, 1, keepdim=True)),
    "view": C(lambda x: x.view(-1)),
    "view_copy": C(lambda x: torch.ops.aten.view_copy(x, [-1, 1])),
    "where": C(lambda x: torch.where(x > 0, x, 0.0)),
    "zeros": C(lambda x: torch.zeros(2, x.shape[0], dtype=torch.int32)),
    "zeros_like": C(lambda x: torch.zeros_like(x)),
}


class _Fn1(torch.nn.Module):
    def forward(self, x):
        return self.fn(x)


class _Fn2(torch.nn.Module):
    def forward(self, x, y):
        return self.fn(x, y)


def module(fn, count):
    """A module whose forward applies ``fn`` to its ``count`` inputs."""
    m = (_Fn1, _Fn2)[count - 1]()
    m.fn = fn
    return m


def example(inputs, n, seed=0):
    """numpy arrays for ``inputs`` with the symbolic length ``n``: normal floats, small
    non-negative integers (valid indices of length 3), random bools."""
    rng = np.random.default_rng(seed + n)
    out = []
    for shape, dtype in inputs:
        shape = tuple(n if d == "n" else d for d in shape)
        if dtype == "bool":
            out.append(rng.random(shape) > 0.5)
        elif dtype.startswith("int"):
            out.append(rng.integers(0, 3, shape).astype(dtype))
        else:
            out.append((rng.standard_normal(shape) * 2).astype(dtype))
    return out


def import_case(case):
    """(the imported module, the operator names of the graph torch gave)."""
    if case.via == "graph":
        graph = torch.fx.Graph()
        graph.output(graph.call_function(case.fn, (graph.placeholder("x"), 2)))
        gm = torch.fx.GraphModule(torch.nn.Module(), graph)
        names = {case.fn.__name__}
        return from_fx(gm, [case.inputs[0]], unwrap_unit_return_tuple=True), names
    m = module(case.fn, len(case.inputs))
    if case.via == "fx":
        gm = torch.fx.symbolic_trace(m)
        names = {n.target if isinstance(n.target, str) else getattr(n.target, "__name__", "")
                 for n in gm.graph.nodes if n.op.startswith("call_")}
        return from_fx(gm, list(case.inputs), unwrap_unit_return_tuple=True), names
    n = torch.export.Dim("n", min=2, max=64)
    dims = tuple({k: n for k, d in enumerate(shape) if d == "n"} for shape, _ in case.inputs)
    args = tuple(torch.from_numpy(a) for a in example(case.inputs, 4))
    program = torch.export.export(m, args, dynamic_shapes=dims)
    if case.via == "core":
        program = program.run_decompositions()
    names = {operator_name(node.target) for node in program.graph.nodes
             if node.op == "call_function"}
    return from_exported_program(program, unwrap_unit_return_tuple=True), names


@lru_cache(maxsize=None)
def imported(name):
    return import_case(CASES[name])


def torch_outputs(case, arrays):
    tensors = [torch.from_numpy(a.copy()) for a in arrays]
    with torch.no_grad():
        out = case.fn(*tensors) if case.via != "graph" else case.fn(tensors[0], 2)
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _dims(sinfo):
    if isinstance(sinfo, TupleStructInfo):
        return [d for field in sinfo.fields for d in _dims(field)]
    return [(sinfo.shape_values, sinfo.dtype)]


def _bind(func, arrays):
    binding = {}
    for param, array in zip(func.params, arrays):
        for dim, size in zip(param.struct_info_.shape_values, array.shape):
            if isinstance(dim, TirVar):
                binding[dim] = IntImm("int64", size)
    return binding


def test_the_cases_are_readmes_operator_list():
    text = Path(__file__).resolve().parents[3].joinpath("README.md").read_text()
    section = text.split("## PyTorch operators", 1)[1].split("\n## ", 1)[0]
    names = section.strip().split("\n\n")[-1]  # the list closes the section
    listed = {w.strip("`,. \n") for w in names.split("`")[1::2]}
    assert sorted(listed - set(CASES)) == [], "operators README lists without a case"
    assert sorted(set(CASES) - listed) == [], "cases of operators README does not list"


@pytest.mark.parametrize("name", sorted(CASES))
def test_struct_info_matches_torch_at_two_lengths(name):
    case = CASES[name]
    mod, names = imported(name)
    assert name in names, f"the graph torch gave has no {name} node: {sorted(names)}"
    func = mod["main"]
    for n in LENGTHS:
        arrays = example(case.inputs, n)
        expected = torch_outputs(case, arrays)
        sinfos = _dims(func.ret_struct_info)
        assert len(sinfos) == len(expected), name
        binding = _bind(func, arrays)
        for (shape, dtype), want in zip(sinfos, expected):
            assert shape is not None, f"{name}: the result's shape is unknown"
            got = [simplify(substitute(d, binding)) for d in shape]
            assert [getattr(d, "value", d) for d in got] == list(want.shape), name
            assert str(dtype) == str(want.dtype).replace("torch.", ""), name


@pytest.fixture(scope="module")
def vm():
    """One VirtualMachine running every case's function, named after the case."""
    funcs = {GlobalVar(name): imported(name)[0]["main"].with_attr({"global_symbol": name})
             for name in sorted(CASES)}
    return relax.VirtualMachine(relax.build(IRModule(funcs)), rvm.cpu())


def _arrays(out):
    if hasattr(out, "numpy"):
        return [out.numpy()]
    return [a for item in out for a in _arrays(item)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_torch_after_build(vm, name):
    case = CASES[name]
    for n in LENGTHS:
        arrays = example(case.inputs, n)
        expected = [t.numpy() for t in torch_outputs(case, arrays)]
        actual = _arrays(vm[name](*arrays))
        assert [a.dtype for a in actual] == [e.dtype for e in expected], name
        assert [a.shape for a in actual] == [e.shape for e in expected], name
        if case.values:
            for a, e in zip(actual, expected):
                np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-5, err_msg=name)
