"""Every operator README lists under 'PyTorch operators' with an input it does not support
(an argument it would not honour, a dtype, a dimension out of range, a shape that
depends on the data): the importer refuses it with GraphImportError naming the node,
the operator and what was expected. Operators that take nothing but their input (the
guards, the aliases, the fixed-dtype casts) are listed with the reason instead."""
import operator
import re

import pytest

from rvm.relax.frontend.torch import GraphImportError, from_exported_program, from_fx
from tests.relax.frontend.test_torch_aten_ops import CASES, F, IDX, W23, X, module
from tests.relax.frontend.torch_models import torch

pytestmark = pytest.mark.frontend

I64 = (("n", 3), "int64")
BOOL = (("n", 3), "bool")
X4 = ((2, 3, 2, 2), "float32")
X3 = ((3, 2, 2), "float32")  # an unbatched image
ATEN = torch.ops.aten
OUT = r"the keyword argument 'out' is not supported; expected input"
DIM = r"dimension 5 is out of range for a tensor of rank 2; expected -2 to 1"
STR = r"relax.%s: operands must be Relax expressions or scalars, got str"
COMPLEX = r"unsupported torch dtype torch.complex64"
RANK4 = (r"pool2d expects a rank-4 \(N, C, H, W\) tensor, got rank 3; an unbatched "
         r"\(C, H, W\) input needs x\[None\] first")
BOOL_ONLY = r"bitwise operators of (float32|int64) are not supported; expected bool tensors"


class Bad:
    """``fn`` of the inputs imported ``via`` "fx" or "export", refused with ``message``."""

    def __init__(self, fn, message, *inputs, via="fx", other=None):
        self.fn, self.message, self.inputs, self.via = fn, message, inputs or (X,), via
        self.other = other  # via "graph": the second operand (None: x.size(0))


def _bool(name):
    return rf"{name} of a bool tensor is not supported \(torch refuses it too\)"


def _dropout(name):
    return rf"{name} in training mode \(p=0.5\) zeroes random elements; expected training=False"


def _copy_then_read(x):
    c = x.clone()
    c.copy_(x * 2)
    return c + 1  # the written clone, read after the copy


_GUARD = "a guard torch checked while tracing: dropped, it has no input of its own to refuse"
_ALIAS = "returns its input: it has no argument but the tensor"
_CAST = "casts to a fixed dtype: it has no argument but the tensor"

# operators with no input of their own that the importer could not honour
NOTHING_TO_REFUSE = {
    "_assert_async": _GUARD, "_assert_scalar": _GUARD, "_assert_tensor_metadata": _GUARD,
    "sym_constrain_range": _GUARD, "sym_constrain_range_for_size": _GUARD,
    "alias": _ALIAS, "clone": _ALIAS, "contiguous": _ALIAS, "detach": _ALIAS,
    "detach_": _ALIAS, "lift_fresh_copy": _ALIAS,
    "bool": _CAST, "double": _CAST, "float": _CAST, "half": _CAST, "int": _CAST,
    "long": _CAST,
    "numel": "the element count of any tensor, symbolic sizes included",
    "sym_numel": "the element count of any tensor, symbolic sizes included",
    "numpy_T": "reverses the axes of a tensor of any rank",
}

BAD = {
    "_adaptive_avg_pool2d": Bad(lambda x: ATEN._adaptive_avg_pool2d(x, [1, 1]), RANK4, X3),
    "_log_softmax": Bad(lambda x: ATEN._log_softmax(x, 1, True),
                        r"_log_softmax with half_to_float=True is not supported"),
    "_native_batch_norm_legit_no_training": Bad(
        lambda x: ATEN._native_batch_norm_legit_no_training(x, None, None, W23[0], W23[1],
                                                            0.1, 1e-5, 1),
        r"takes at most 7 arguments"),
    "_softmax": Bad(lambda x: ATEN._softmax(x, 5, False), DIM),
    "_to_copy": Bad(lambda x: ATEN._to_copy(x, dtype=torch.complex64), COMPLEX),
    "_unsafe_view": Bad(lambda x: ATEN._unsafe_view(x, [x]), r"a size must be an int"),
    "abs": Bad(torch.abs, _bool("abs"), BOOL),
    "adaptive_avg_pool2d": Bad(lambda x: F.adaptive_avg_pool2d(x, 1), RANK4, X3),
    "add": Bad(lambda x: torch.add(x, x, out=x), OUT),
    "add_": Bad(lambda x: x.add_(x, out=x), r"the keyword argument 'out' is not supported"),
    "addmm": Bad(lambda x: torch.addmm(x, x, x, out=x), OUT),
    "all": Bad(lambda x: x.all(5), DIM),
    "alpha_dropout": Bad(lambda x: F.alpha_dropout(x, 0.5, True), _dropout("alpha_dropout")),
    "amax": Bad(lambda x: x.amax(5), DIM),
    "amin": Bad(lambda x: x.amin(5), DIM),
    "and_": Bad(lambda x: x & x, BOOL_ONLY),
    "any": Bad(lambda x: x.any(5), DIM),
    "arange": Bad(lambda x: torch.arange(x), r"arange: 'end' must be a number or a symbolic "
                                             r"size, got Var"),
    "avg_pool2d": Bad(lambda x: F.avg_pool2d(x, 2, divisor_override=3),
                      r"avg_pool2d with divisor_override is not supported", X4),
    "baddbmm": Bad(lambda x: torch.baddbmm(x, x, x, out=x), OUT),
    "batch_norm": Bad(lambda x: torch.batch_norm(x, None, None, W23[0], W23[1], True, 0.1,
                                                 1e-5, False),
                      r"the graph was recorded in training mode; call model.eval\(\)"),
    "bitwise_and": Bad(lambda x: torch.bitwise_and(x, x), BOOL_ONLY, I64),
    "bitwise_not": Bad(torch.bitwise_not, r"bitwise_not of int64 is not supported; expected "
                                          r"a bool tensor", I64),
    "bitwise_or": Bad(lambda x: torch.bitwise_or(x, x), BOOL_ONLY, I64),
    "bmm": Bad(lambda x: torch.bmm(x, x.t()), r"bmm expects two rank-3 tensors, got ranks 2 "
                                            r"and 2"),
    "broadcast_to": Bad(lambda x: torch.broadcast_to(x, (2, 4)), r"broadcast"),
    "cat": Bad(lambda x: torch.cat([x, x], 5), r"axis 5"),
    "chunk": Bad(lambda x: x.chunk(2, 5), r"axis 5"),
    "clamp": Bad(lambda x: torch.clamp(x, min=x), r"a bound must be a number or None, got "
                                                  r"Var; tensor bounds are not supported"),
    "clip": Bad(lambda x: torch.clip(x, x), r"a bound must be a number or None"),
    "concat": Bad(lambda x: torch.concat([x, x], 5), r"axis 5"),
    "concatenate": Bad(lambda x: torch.concatenate([x, x], 5), r"axis 5"),
    "conv2d": Bad(lambda x: F.conv2d(x, W23[:1, :2].reshape(1, 1, 1, 2), padding="same"),
                  r"padding='same' with an even kernel extent is not supported",
                  ((1, 1, 3, 3), "float32")),
    "convolution": Bad(lambda x: ATEN.convolution(x, torch.ones(3, 1, 2, 2), None, [1, 1],
                                                  [0, 0], [1, 1], True, [0, 0], 1),
                       r"only 2-D convolution \(a rank-4 input, not transposed\)", X4),
    "copy_": Bad(_copy_then_read, r"copy_ writes into 'clone', which node 'add' reads "
                                  r"afterwards; expected a copy whose destination is read "
                                  r"only through the copy's result"),
    "cos": Bad(lambda x: torch.cos(x, out=x), OUT),
    "cumsum": Bad(lambda x: torch.cumsum(x, 5), DIM),
    "div": Bad(lambda x: torch.div(x, 2, rounding_mode="trunc"),
               r"div: rounding_mode 'trunc' is not supported; expected None or 'floor'"),
    "div_": Bad(lambda x: x.div_(2, rounding_mode="trunc"), r"rounding_mode 'trunc'"),
    "divide": Bad(lambda x: torch.divide(x, 2, rounding_mode="trunc"), r"rounding_mode"),
    "dropout": Bad(lambda x: F.dropout(x, 0.5), _dropout("dropout")),
    "dropout_": Bad(lambda x: torch.dropout_(x, 0.5, True), _dropout("dropout_")),
    "embedding": Bad(lambda x: ATEN.embedding(W23.T, x), r"relax.take.*indices.*int"),
    "empty": Bad(lambda x: torch.empty(x), r"a size must be an int or a symbolic dimension, "
                                           r"got Var"),
    "empty_like": Bad(lambda x: torch.empty_like(x, dtype=torch.complex64), COMPLEX),
    "eq": Bad(lambda x: torch.eq(x, x, out=x), OUT),
    "erf": Bad(lambda x: torch.erf(x, out=x), OUT),
    "exp": Bad(lambda x: torch.exp(x, out=x), OUT),
    "expand": Bad(lambda x: x.expand(2, 4), r"broadcast"),
    "expand_as": Bad(lambda x: x.expand_as(W23.T), r"broadcast"),
    "feature_dropout": Bad(lambda x: torch.feature_dropout(x, 0.5, True),
                           _dropout("feature_dropout")),
    "flatten": Bad(lambda x: torch.flatten(x, 5), DIM),
    "floor_divide": Bad(lambda x: torch.floor_divide(x, 2, out=x), OUT),
    "floordiv": Bad(lambda x: x // "a", STR % "floor_divide"),
    "full": Bad(lambda x: torch.full((x.size(0),), 1.0, dtype=torch.complex64), COMPLEX),
    "full_like": Bad(lambda x: torch.full_like(x, 1, dtype=torch.complex64), COMPLEX),
    "gather": Bad(lambda x: torch.gather(x, 5, x.long()), DIM),
    "ge": Bad(lambda x: torch.ge(x, x, out=x), OUT),
    "gelu": Bad(lambda x: F.gelu(x, approximate="sigmoid"),
                r"gelu: approximate='sigmoid'; expected 'none' or 'tanh'"),
    "getattr": Bad(lambda x: x.device, r"attribute 'device' of a Var is not supported; "
                                       r"expected shape, dtype, ndim or T of a tensor"),
    "getitem": Bad(lambda x: x[x > 0], r"a boolean mask gives a data-dependent shape"),
    "group_norm": Bad(lambda x: F.group_norm(x, 2), r"group", X4),
    "gt": Bad(lambda x: torch.gt(x, x, out=x), OUT),
    "hardsigmoid": Bad(F.hardsigmoid, r"hardsigmoid/hardswish of a int64 tensor is not "
                                      r"supported \(torch refuses it too\)", I64),
    "hardsigmoid_": Bad(ATEN.hardsigmoid_, r"hardsigmoid/hardswish of a int64", I64),
    "hardswish": Bad(F.hardswish, r"hardsigmoid/hardswish of a int64", I64),
    "hardswish_": Bad(ATEN.hardswish_, r"hardsigmoid/hardswish of a int64", I64),
    "hardtanh": Bad(lambda x: F.hardtanh(x, x), r"a bound must be a number or None"),
    "iadd": Bad(operator.iadd, STR % "add", via="graph", other="a"),
    "imul": Bad(operator.imul, STR % "multiply", via="graph", other="a"),
    "index": Bad(lambda x: x[IDX, :, IDX], r"index: the index tensors must be on adjacent "
                                           r"axes \(x\[:, i, j\]\), got them on axes \[0, 2\]",
                 (("n", 3, 3), "float32"), via="export"),
    "index_select": Bad(lambda x: torch.index_select(x, 5, IDX), DIM),
    "isub": Bad(operator.isub, STR % "subtract", via="graph", other="a"),
    "layer_norm": Bad(lambda x: F.layer_norm(x, (4,)), r"layer_norm"),
    "le": Bad(lambda x: torch.le(x, x, out=x), OUT),
    "linear": Bad(lambda x: F.linear(x, W23.T), r"matmul"),
    "log": Bad(lambda x: torch.log(x, out=x), OUT),
    "log_softmax": Bad(lambda x: torch.log_softmax(x, 5), DIM),
    "logical_and": Bad(lambda x: torch.logical_and(x, x, out=x), r"keyword argument 'out'"),
    "logical_not": Bad(lambda x: torch.logical_not(x, out=x), OUT),
    "logical_or": Bad(lambda x: torch.logical_or(x, x, out=x), r"keyword argument 'out'"),
    "lt": Bad(lambda x: torch.lt(x, x, out=x), OUT),
    "masked_fill": Bad(lambda x: x.masked_fill(x, 1.0), r"masked_fill: the mask must be a bool "
                                                        r"tensor, got float32"),
    "masked_fill_": Bad(lambda x: x.masked_fill_(x, 1.0), r"the mask must be a bool tensor"),
    "matmul": Bad(lambda x: torch.matmul(x, W23), r"matmul"),
    "max": Bad(lambda x: torch.max(x, 1), r"min/max over a dimension \(values and indices\) "
                                          r"is not supported"),
    "max_pool2d": Bad(lambda x: F.max_pool2d(x, 2), RANK4.replace("pool", "max_pool"), X3),
    "max_pool2d_with_indices": Bad(lambda x: ATEN.max_pool2d_with_indices(x, [2, 2]),
                                   RANK4.replace("pool", "max_pool"), X3),
    "maximum": Bad(lambda x: torch.maximum(x, x, out=x), OUT),
    "mean": Bad(lambda x: x.mean(1), r"mean of a int64 tensor is not supported \(torch "
                                     r"refuses it too\); expected a float tensor or dtype=",
                I64),
    "min": Bad(lambda x: torch.min(x, 0), r"min/max over a dimension"),
    "minimum": Bad(lambda x: torch.minimum(x, x, out=x), OUT),
    "mm": Bad(lambda x: torch.mm(x, x), r"mm expects two rank-2 tensors, got ranks 4 and 4",
              X4),
    "mul": Bad(lambda x: torch.mul(x, x, out=x), OUT),
    "mul_": Bad(lambda x: x.mul_(x, out=x), r"the keyword argument 'out' is not supported"),
    "multiply": Bad(lambda x: torch.multiply(x, x, out=x), OUT),
    "native_group_norm": Bad(lambda x: ATEN.native_group_norm(x, None, None, 2, 3, 4, 2, 1e-5),
                             r"group", X4),
    "native_layer_norm": Bad(lambda x: ATEN.native_layer_norm(x, [4], None, None, 1e-5),
                             r"layer_norm"),
    "ne": Bad(lambda x: torch.ne(x, x, out=x), OUT),
    "neg": Bad(torch.neg, _bool("neg"), BOOL),
    "negative": Bad(torch.negative, _bool("negative"), BOOL),
    "new_empty": Bad(lambda x: x.new_empty(3, dtype=torch.complex64), COMPLEX),
    "new_full": Bad(lambda x: x.new_full((3,), 1, dtype=torch.complex64), COMPLEX),
    "new_ones": Bad(lambda x: x.new_ones(3, dtype=torch.complex64), COMPLEX),
    "new_zeros": Bad(lambda x: x.new_zeros(3, dtype=torch.complex64), COMPLEX),
    "ones": Bad(lambda x: torch.ones(x.size(0), dtype=torch.complex64), COMPLEX),
    "ones_like": Bad(lambda x: torch.ones_like(x, dtype=torch.complex64), COMPLEX),
    "or_": Bad(lambda x: x | x, BOOL_ONLY),
    "permute": Bad(lambda x: x.permute(0, 5), DIM),
    "pow": Bad(lambda x: x ** 2, r"pow of a int64 tensor is not supported; expected a float "
                                 r"tensor", I64),
    "relu": Bad(torch.relu, _bool("relu"), BOOL),
    "relu_": Bad(torch.relu_, _bool("relu_"), BOOL),
    "reshape": Bad(lambda x: x.reshape(x), r"a size must be an int"),
    "rsqrt": Bad(lambda x: torch.rsqrt(x, out=x), OUT),
    "rsub": Bad(torch.rsub, STR % "subtract", via="graph", other="a"),
    "scalar_tensor": Bad(lambda x: torch.scalar_tensor(x.size(0)), r"scalar_tensor"),
    "scaled_dot_product_attention": Bad(
        lambda x: F.scaled_dot_product_attention(x, x, x, dropout_p=0.5),
        r"scaled_dot_product_attention with dropout_p=0.5 drops random weights"),
    "select": Bad(lambda x: x.select(5, 0), DIM),
    "sigmoid": Bad(lambda x: torch.sigmoid(x, out=x), OUT),
    "silu": Bad(F.silu, r"relax.nn.silu expects a float tensor, got int64", I64),
    "silu_": Bad(ATEN.silu_, r"relax.nn.silu expects a float tensor, got int64", I64),
    "sin": Bad(lambda x: torch.sin(x, out=x), OUT),
    "size": Bad(lambda x: x.reshape(x.size(5)), DIM),
    "slice": Bad(lambda x: ATEN.slice(x, 5), DIM),
    "softmax": Bad(lambda x: torch.softmax(x, 5), DIM),
    "split": Bad(lambda x: x.split(1, 5), DIM),
    "split_with_sizes": Bad(lambda x: x.split_with_sizes([1, 1], 1),
                            r"the sizes \[1, 1\] add up to 2; expected the length 3 of axis 1"),
    "sqrt": Bad(lambda x: torch.sqrt(x, out=x), OUT),
    "square": Bad(lambda x: torch.square(x, out=x), OUT),
    "squeeze": Bad(lambda x: x.squeeze(5), DIM),
    "stack": Bad(lambda x: torch.stack([x, x], 5), r"dimension 5 is out of range for a tensor "
                                                   r"of rank 3"),
    "sub": Bad(lambda x: torch.sub(x, x, out=x), r"keyword argument 'out'"),
    "sub_": Bad(lambda x: x.sub_(x, out=x), r"the keyword argument 'out' is not supported"),
    "subtract": Bad(lambda x: torch.subtract(x, x, out=x), r"keyword argument 'out'"),
    "sum": Bad(lambda x: x.sum(5), DIM),
    "swapaxes": Bad(lambda x: torch.swapaxes(x, 0, 5), DIM),
    "sym_size": Bad(lambda x: x.reshape(ATEN.sym_size(x, 5)), DIM),
    "t": Bad(lambda x: x.t(), r"t expects a tensor of rank <= 2, got rank 4", X4),
    "tanh": Bad(lambda x: torch.tanh(x, out=x), OUT),
    "to": Bad(lambda x: x.to(torch.complex64), COMPLEX),
    "transpose": Bad(lambda x: x.transpose(0, 5), DIM),
    "tril": Bad(lambda x: torch.tril(x[0]), r"tril needs a tensor of rank >= 2"),
    "triu": Bad(lambda x: torch.triu(x[0]), r"triu needs a tensor of rank >= 2"),
    "truediv": Bad(lambda x: x / "a", STR % "divide"),
    "type": Bad(lambda x: x.type(), r"type\(\) without a dtype gives the name of the tensor "
                                    r"type, which is not supported"),
    "type_as": Bad(lambda x: x.type_as(2), r"other must be a tensor, got int"),
    "unbind": Bad(lambda x: x.unbind(5), DIM),
    "unflatten": Bad(lambda x: x.unflatten(5, (3, 1)), DIM),
    "unsqueeze": Bad(lambda x: x.unsqueeze(5), r"dimension 5 is out of range for a tensor of "
                                               r"rank 3"),
    "var": Bad(lambda x: torch.var(x, 5), DIM),
    "view": Bad(lambda x: x.view(x), r"a size must be an int"),
    "view_copy": Bad(lambda x: ATEN.view_copy(x, [x]), r"a size must be an int"),
    "where": Bad(lambda x: torch.where(x > 0), r"where\(condition\) alone gives the indices of "
                                               r"the True elements"),
    "zeros": Bad(lambda x: torch.zeros(x.size(0), dtype=torch.complex64), COMPLEX),
    "zeros_like": Bad(lambda x: torch.zeros_like(x, dtype=torch.complex64), COMPLEX),
}


def test_every_operator_has_a_refused_input_or_a_reason():
    assert sorted(set(CASES) - set(BAD) - set(NOTHING_TO_REFUSE)) == []
    assert sorted((set(BAD) | set(NOTHING_TO_REFUSE)) - set(CASES)) == []
    assert sorted(set(BAD) & set(NOTHING_TO_REFUSE)) == []


def _import(bad):
    if bad.via == "graph":  # as torch.compile records ``x += 2``
        graph = torch.fx.Graph()
        x = graph.placeholder("x")
        other = graph.call_method("size", (x, 0)) if bad.other is None else bad.other
        graph.output(graph.call_function(bad.fn, (x, other)))
        return from_fx(torch.fx.GraphModule(torch.nn.Module(), graph), [X])
    m = module(bad.fn, len(bad.inputs))
    if bad.via == "fx":
        return from_fx(torch.fx.symbolic_trace(m), list(bad.inputs))
    n = torch.export.Dim("n", min=2, max=64)
    dims = tuple({k: n for k, d in enumerate(shape) if d == "n"} for shape, _ in bad.inputs)
    args = tuple(torch.ones([4 if d == "n" else d for d in shape]) for shape, _ in bad.inputs)
    return from_exported_program(torch.export.export(m, args, dynamic_shapes=dims))


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_refused_input_names_the_node_and_the_operator(name):
    bad = BAD[name]
    with pytest.raises(GraphImportError) as info:
        _import(bad)
    text = str(info.value)
    head = rf"^from_\w+: node '\w+' \(call_\w+ [^)]*\b{name}\b[^)]*\)( in [^:]*)?: "
    assert re.search(head, text), text
    assert re.search(bad.message, text), text
