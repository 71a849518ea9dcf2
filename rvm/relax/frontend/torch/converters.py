"""Converters from PyTorch operators to Relax operators, by name (``"add"``, ``"linear"``).

A converter is ``fn(importer, node) -> value``: it reads the node's
arguments (positional as PyTorch passes them, or by keyword), emits Relax
operators and returns the node's value. The same converter serves a torch
function (``torch.add``), a tensor method (``x.add``), an ``operator``
function (``a + b``, also on symbolic sizes) and the ATen operator of an
exported program (``aten.add.Tensor``) when their arguments agree. An
argument a converter does not read (``out=``, a further positional one) is
refused rather than ignored, and dtypes promote as torch promotes them.
``CONVERTERS`` holds them all; this module has the elementwise, reduction and
linear-algebra ones, ``converters_shape`` and ``converters_nn`` the others.
"""
import math
import operator

import numpy as np

from rvm.ir.expr import PrimExpr, RelaxExpr
from rvm.relax.op import binary, linear_algebra, statistical, unary
from rvm.relax.op.manipulate import permute_dims
from rvm.relax.op.nn import activation
from rvm.relax.expr import PrimValue
from rvm.relax.struct_info import TensorStructInfo
from rvm.relax.frontend.torch.importer import torch_dtype
from rvm.tir import op as tir_op

CONVERTERS = {}
REQUIRED = object()


def converter(*names):
    """Decorator: registers ``fn(importer, node)`` under each of ``names``."""

    def register(fn):
        for name in names:
            CONVERTERS[name] = fn
        return fn

    return register


# keyword arguments that do not change the values an operator computes (where the result
# lives, how it is laid out, whether it records gradients, whether it reuses its input)
HARMLESS_KWARGS = frozenset({"device", "layout", "pin_memory", "requires_grad",
                             "memory_format", "non_blocking", "inplace"})


def args(imp, node, *spec):
    """The values of the node's arguments described by ``spec``: ``(name, default)`` pairs in
    PyTorch's positional order (``REQUIRED`` for no default). An argument beyond ``spec``
    (``out=``, a further positional one) is refused: the converter would not honour it."""
    names = [name for name, _ in spec]
    check_arguments(node, names)
    out = []
    for k, (name, default) in enumerate(spec):
        if k < len(node.args):
            value = node.args[k]
        elif name in node.kwargs:
            value = node.kwargs[name]
        elif default is REQUIRED:
            raise TypeError(f"missing argument '{name}'")
        else:
            value = default
        out.append(imp.value(value))
    return out


def check_arguments(node, names):
    """TypeError when ``node`` passes more positional arguments than ``names`` or a keyword
    argument outside ``names`` (and outside ``HARMLESS_KWARGS``)."""
    if len(node.args) > len(names):
        raise TypeError(f"takes at most {len(names)} arguments ({', '.join(names)}), got "
                        f"{len(node.args)}")
    unknown = sorted(set(node.kwargs) - set(names) - HARMLESS_KWARGS)
    if unknown:
        raise TypeError(f"the keyword argument {unknown[0]!r} is not supported; expected "
                        f"{', '.join(names)}")


def is_tensor(value):
    """Whether ``value`` is a Relax tensor expression."""
    return isinstance(value, RelaxExpr) and isinstance(value.struct_info_, TensorStructInfo)


def tensor_sinfo(value, what="input"):
    """The TensorStructInfo of ``value`` (TypeError naming ``what`` otherwise)."""
    if not is_tensor(value):
        raise TypeError(f"{what} must be a tensor, got {type(value).__name__}")
    return value.struct_info_


def rank(value):
    """The rank of a tensor expression (TypeError when unknown)."""
    sinfo = tensor_sinfo(value)
    if sinfo.ndim < 0:
        raise TypeError("the rank of the input is unknown")
    return sinfo.ndim


def axis_list(dims, ndim):
    """``dims`` (an int, a list of ints, or None for all) as non-negative axes; ValueError
    for a dimension outside ``-ndim .. ndim - 1`` (a scalar's one axis is 0 or -1)."""
    if dims is None:
        return list(range(ndim))
    dims = [dims] if isinstance(dims, int) else list(dims)
    bound = max(ndim, 1)
    for d in dims:
        if not isinstance(d, int) or isinstance(d, bool):
            raise TypeError(f"a dimension must be an int, got {type(d).__name__} {d!r}")
        if not -bound <= d < bound:
            raise ValueError(f"dimension {d} is out of range for a tensor of rank {ndim}; "
                             f"expected {-bound} to {bound - 1}")
    return [d % bound for d in dims]


# -- elementwise ----------------------------------------------------------------------------
def _binary(relax_fn, python_fn, alpha=False):
    spec = [("input", REQUIRED), ("other", REQUIRED)] + ([("alpha", 1)] if alpha else [])

    def convert(imp, node):
        lhs, rhs, *scale = args(imp, node, *spec)
        return binary_op(imp, relax_fn, python_fn, lhs, rhs, scale[0] if scale else 1)

    return convert


def binary_op(imp, relax_fn, python_fn, lhs, rhs, alpha=1):
    """Emits ``relax_fn(lhs, rhs * alpha)`` with torch's type promotion (a float scalar
    makes an integer tensor float32, true division of integers is float32); two sizes
    (ints or symbolic) give ``python_fn(lhs, rhs)``."""
    if not isinstance(lhs, RelaxExpr) and not isinstance(rhs, RelaxExpr):
        return python_fn(lhs, rhs)  # arithmetic on sizes, possibly symbolic
    lhs, rhs = _static(lhs), _static(rhs)
    lhs = _promote_scalar(imp, lhs, _as_number(rhs))
    rhs = _promote_scalar(imp, rhs, _as_number(lhs))
    if alpha != 1:
        rhs = imp.emit(binary.multiply(rhs, alpha)) if is_tensor(rhs) else rhs * alpha
    lhs, rhs = promote(imp, lhs, rhs)
    dtype = tensor_sinfo(lhs if is_tensor(lhs) else rhs).dtype
    if relax_fn is binary.divide and dtype is not None and not dtype.is_float:
        lhs, rhs = (imp.emit(unary.astype(v, "float32")) if is_tensor(v) else
                    v if _is_symbolic(v) else float(v) for v in (lhs, rhs))
        dtype = tensor_sinfo(lhs if is_tensor(lhs) else rhs).dtype
    if relax_fn is binary.power and dtype is not None and not dtype.is_float:
        raise TypeError(f"pow of a {dtype} tensor is not supported; expected a float tensor")
    # a symbolic size (x.size(0)) acts as a Python int: a scalar of the tensor's dtype
    lhs, rhs = (PrimValue(tir_op.cast(v, str(dtype))) if _is_symbolic(v) and dtype is not None
                else v for v in (lhs, rhs))
    return imp.emit(relax_fn(lhs, rhs))


def _is_symbolic(value):
    return isinstance(value, PrimExpr) and not isinstance(value, RelaxExpr)


def _as_number(value):
    """A symbolic size as the Python int it stands for (for type promotion: its value is
    not needed), anything else as it is."""
    return 0 if _is_symbolic(value) else value


def _promote_scalar(imp, value, scalar):
    """``value`` cast as torch promotes a tensor next to the Python number ``scalar``: an
    integer or bool tensor with a float becomes float32, a bool tensor with an int int64."""
    if not is_tensor(value) or isinstance(scalar, RelaxExpr) or scalar is None:
        return value
    dtype = tensor_sinfo(value).dtype
    if dtype is None or dtype.is_float:
        return value
    if isinstance(scalar, float):
        return imp.emit(unary.astype(value, "float32"))
    if dtype.is_bool and isinstance(scalar, int) and not isinstance(scalar, bool):
        return imp.emit(unary.astype(value, "int64"))
    return value


def _static(value):
    """A size as an int when it is a constant; a symbolic size stays as it is."""
    if _is_symbolic(value) and isinstance(getattr(value, "value", None), int):
        return value.value
    return value


def _kind(dtype):
    return 0 if dtype.is_bool else 2 if dtype.is_float else 1


def promote(imp, lhs, rhs):
    """Two operands cast to one dtype as torch promotes tensors of different dtypes:
    bool < integers < floats, then the wider type (``mask * x`` of a bool mask is float)."""
    if not (is_tensor(lhs) and is_tensor(rhs)):
        return lhs, rhs
    left, right = tensor_sinfo(lhs).dtype, tensor_sinfo(rhs).dtype
    if left is None or right is None or left == right:
        return lhs, rhs
    key = (_kind(left), left.bits)
    target = left if key >= (_kind(right), right.bits) else right
    if left != target:
        lhs = imp.emit(unary.astype(lhs, str(target)))
    if right != target:
        rhs = imp.emit(unary.astype(rhs, str(target)))
    return lhs, rhs


for _names, _relax, _python, _alpha in [
        (("add", "add_", "iadd", "__add__", "__radd__"), binary.add, operator.add, True),
        (("sub", "sub_", "subtract", "isub", "__sub__"), binary.subtract, operator.sub, True),
        (("mul", "mul_", "multiply", "imul", "__mul__", "__rmul__"), binary.multiply,
         operator.mul, False),
        (("truediv", "__truediv__"), binary.divide, operator.truediv, False),
        (("floordiv", "floor_divide", "__floordiv__"), binary.floor_divide,
         operator.floordiv, False),
        (("pow", "__pow__"), binary.power, operator.pow, False),
        (("maximum",), binary.maximum, max, False), (("minimum",), binary.minimum, min, False),
        (("eq", "__eq__"), binary.equal, operator.eq, False),
        (("ne", "__ne__"), binary.not_equal, operator.ne, False),
        (("lt", "__lt__"), binary.less, operator.lt, False),
        (("le",), binary.less_equal, operator.le, False),
        (("gt", "__gt__"), binary.greater, operator.gt, False),
        (("ge",), binary.greater_equal, operator.ge, False)]:
    converter(*_names)(_binary(_relax, _python, _alpha))


@converter("div", "div_", "divide")
def _div(imp, node):
    lhs, rhs, mode = args(imp, node, ("input", REQUIRED), ("other", REQUIRED),
                          ("rounding_mode", None))
    if mode is None:
        return binary_op(imp, binary.divide, operator.truediv, lhs, rhs)
    if mode != "floor":
        raise ValueError(f"div: rounding_mode {mode!r} is not supported; expected None or "
                         "'floor'")
    return binary_op(imp, binary.floor_divide, operator.floordiv, lhs, rhs)


# unary operators torch computes in floating point (an integer or bool input is float32)
_FLOAT_ONLY = ("sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt", "erf", "sin", "cos")
# and those torch refuses for bool tensors
_NO_BOOL = ("relu", "relu_", "abs", "neg", "negative", "__neg__")


def _unary(relax_fn, python_fn=None):
    def convert(imp, node):
        (x,) = args(imp, node, ("input", REQUIRED))
        if python_fn is not None and not isinstance(x, RelaxExpr):
            return python_fn(x)  # arithmetic on sizes, possibly symbolic
        name = op_name(node)
        dtype = tensor_sinfo(x).dtype
        if name in _NO_BOOL and dtype is not None and dtype.is_bool:
            raise TypeError(f"{name} of a bool tensor is not supported (torch refuses it "
                            "too); expected a number tensor")
        if name in _FLOAT_ONLY and dtype is not None and not dtype.is_float:
            x = imp.emit(unary.astype(x, "float32"))
        return imp.emit(relax_fn(x))

    return convert


def op_name(node):
    """The operator name of ``node``'s target: ``aten.relu.default`` and ``torch.relu`` are
    ``relu``, a method call its name."""
    target = node.target
    if isinstance(target, str):
        return target
    name = getattr(target, "_opname", None) or getattr(target, "__name__", str(target))
    return name.split(".")[0]


for _names, _relax in [
        (("relu", "relu_"), activation.relu), (("sigmoid",), unary.sigmoid),
        (("tanh",), unary.tanh), (("exp",), unary.exp), (("log",), unary.log),
        (("sqrt",), unary.sqrt), (("rsqrt",), unary.rsqrt),
        (("abs",), unary.abs), (("erf",), unary.erf), (("silu", "silu_"), activation.silu),
        (("sin",), unary.sin), (("cos",), unary.cos), (("square",), unary.square)]:
    converter(*_names)(_unary(_relax))
converter("neg", "negative", "__neg__")(_unary(unary.negative, operator.neg))


@converter("gelu")
def _gelu(imp, node):
    x, approximate = args(imp, node, ("input", REQUIRED), ("approximate", "none"))
    fn = {"none": activation.gelu, "tanh": activation.gelu_tanh}.get(approximate)
    if fn is None:
        raise ValueError(f"gelu: approximate={approximate!r}; expected 'none' or 'tanh'")
    return imp.emit(fn(x))


@converter("softmax", "_softmax", "log_softmax", "_log_softmax")
def _softmax(imp, node):
    name = op_name(node)
    if name.startswith("_"):  # the ATen form: (input, dim, half_to_float)
        x, dim, half_to_float = args(imp, node, ("input", REQUIRED), ("dim", REQUIRED),
                                     ("half_to_float", False))
        if half_to_float:
            raise ValueError(f"{name} with half_to_float=True is not supported; expected "
                             "False")
        dtype = None
    else:
        spec = [("input", REQUIRED), ("dim", None)]
        if getattr(node.target, "__module__", "") == "torch.nn.functional":
            spec.append(("_stacklevel", 3))
        x, dim, *rest = args(imp, node, *spec, ("dtype", None))
        dtype = rest[-1]
    if dim is None:
        raise ValueError(f"{name} needs 'dim'")
    if dtype is not None:
        x = imp.emit(unary.astype(x, torch_dtype(dtype)))
    fn = activation.log_softmax if "log_softmax" in name else activation.softmax
    return imp.emit(fn(x, axis=axis_list(dim, rank(x))[0]))


@converter("clamp", "clip", "hardtanh")
def _clamp(imp, node):
    if op_name(node) == "hardtanh":
        x, low, high = args(imp, node, ("input", REQUIRED), ("min_val", -1.0),
                            ("max_val", 1.0))
    else:
        x, low, high = args(imp, node, ("input", REQUIRED), ("min", None), ("max", None))
    for bound in (low, high):
        if bound is not None and (isinstance(bound, bool)
                                  or not isinstance(bound, (int, float))):
            raise TypeError(f"a bound must be a number or None, got {type(bound).__name__}; "
                            "tensor bounds are not supported")
    dtype = tensor_sinfo(x).dtype
    if dtype is not None and not dtype.is_float and (isinstance(low, float)
                                                     or isinstance(high, float)):
        x, dtype = imp.emit(unary.astype(x, "float32")), None  # torch promotes to float32
    if dtype is not None and not dtype.is_float:  # an integer tensor: no infinite bounds
        info = np.iinfo(dtype.numpy_dtype) if not dtype.is_bool else np.iinfo("uint8")
        low = info.min if low is None else low
        high = info.max if high is None else high
    low = -math.inf if low is None else low
    high = math.inf if high is None else high
    return imp.emit(unary.clip(x, low, high))


@converter("contiguous", "clone", "detach", "detach_", "alias", "lift_fresh_copy")
def _same(imp, node):
    (x,) = args(imp, node, ("input", REQUIRED))
    return x


@converter("dropout", "dropout_", "feature_dropout", "alpha_dropout")
def _dropout(imp, node):
    # aten.dropout(input, p, train); torch.nn.functional.dropout(input, p, training, inplace)
    check_arguments(node, ["input", "p", "training", "inplace"]
                    + [key for key in ("train",) if key in node.kwargs])
    x = imp.value(node.args[0] if node.args else node.kwargs["input"])
    p = imp.value(node.args[1] if len(node.args) > 1 else node.kwargs.get("p", 0.5))
    # torch.nn.functional's forms default to training=True; the ATen ones pass it
    train = node.args[2] if len(node.args) > 2 else node.kwargs.get(
        "train", node.kwargs.get("training", True))
    if imp.value(train) and p:
        raise ValueError(f"{op_name(node)} in training mode (p={p}) zeroes random "
                         "elements; expected training=False (call model.eval() before "
                         "tracing)")
    return x  # inference: dropout keeps every value


# ``x.type("torch.HalfTensor")``: the CPU tensor type names
_TENSOR_TYPES = {"torch.FloatTensor": "float32", "torch.DoubleTensor": "float64",
                 "torch.HalfTensor": "float16", "torch.BFloat16Tensor": "bfloat16",
                 "torch.LongTensor": "int64", "torch.IntTensor": "int32",
                 "torch.ShortTensor": "int16", "torch.CharTensor": "int8",
                 "torch.ByteTensor": "uint8", "torch.BoolTensor": "bool"}


@converter("to", "type", "float", "half", "double", "int", "long", "bool")
def _to(imp, node):
    name = op_name(node)
    fixed = {"float": "float32", "half": "float16", "double": "float64", "int": "int32",
             "long": "int64", "bool": "bool"}.get(name)
    names = ["input", "dtype", "non_blocking", "copy"] if fixed is None else ["input"]
    check_arguments(node, names + (["device", "other"] if name == "to" else []))
    x = imp.value(node.args[0] if node.args else node.kwargs["input"])
    dtype = fixed
    if dtype is None:
        given = list(node.args[1:]) + [node.kwargs.get("dtype"), node.kwargs.get("other")]
        for value in (imp.value(v) for v in given):
            if is_tensor(value):  # x.to(other): other's dtype
                dtype = str(tensor_sinfo(value).dtype)
            elif isinstance(value, str) and value in _TENSOR_TYPES:
                dtype = _TENSOR_TYPES[value]
            elif value is not None and "torch." in str(value) and "device" not in str(value):
                dtype = torch_dtype(value)
        if dtype is None and name == "type":
            raise ValueError("type() without a dtype gives the name of the tensor type, "
                             "which is not supported; expected x.type(dtype)")
    if dtype is None or tensor_sinfo(x).dtype == dtype:
        return x
    return imp.emit(unary.astype(x, dtype))


# -- reductions -----------------------------------------------------------------------------
def _reduce(relax_fn, with_dtype):
    spec = [("input", REQUIRED), ("dim", None), ("keepdim", False)]
    spec += [("dtype", None)] if with_dtype else []

    def convert(imp, node):
        x, dim, keepdim, *dtype = args(imp, node, *spec)
        name = op_name(node)
        source = tensor_sinfo(x).dtype
        if dtype and dtype[0] is not None:
            x = imp.emit(unary.astype(x, torch_dtype(dtype[0])))
        elif name == "mean" and source is not None and not source.is_float:
            raise TypeError(f"mean of a {source} tensor is not supported (torch refuses it "
                            "too); expected a float tensor or dtype=")
        elif name == "sum" and source is not None and not source.is_float \
                and source != "int64":
            x = imp.emit(unary.astype(x, "int64"))  # torch sums bools and integers in int64
        axes = None if dim is None or list(_as_list(dim)) == [] else axis_list(dim, rank(x))
        return imp.emit(relax_fn(x, axis=axes, keepdims=bool(keepdim)))

    return convert


def _as_list(dim):
    return [dim] if isinstance(dim, int) else dim


for _names, _relax, _dtype in [(("mean",), statistical.mean, True),
                               (("sum",), statistical.sum, True),
                               (("amax",), statistical.max, False),
                               (("amin",), statistical.min, False)]:
    converter(*_names)(_reduce(_relax, _dtype))


# -- linear algebra -------------------------------------------------------------------------
@converter("matmul", "mm", "bmm", "__matmul__")
def _matmul(imp, node):
    lhs, rhs = args(imp, node, ("input", REQUIRED), ("other", REQUIRED))
    fixed = {"mm": 2, "bmm": 3}.get(op_name(node))
    if fixed is not None and (rank(lhs), rank(rhs)) != (fixed, fixed):
        raise ValueError(f"{op_name(node)} expects two rank-{fixed} tensors, got ranks "
                         f"{rank(lhs)} and {rank(rhs)}")
    return imp.emit(linear_algebra.matmul(lhs, rhs))


@converter("linear")
def _linear(imp, node):
    x, weight, bias = args(imp, node, ("input", REQUIRED), ("weight", REQUIRED),
                           ("bias", None))
    return linear(imp, x, weight, bias)


def linear(imp, x, weight, bias=None):
    """Emits ``x @ weight.T (+ bias)`` as matmul(x, permute_dims(weight)) (+ add), the form
    FuseTransposeMatmul turns into one kernel reading ``weight`` in place."""
    out = imp.emit(linear_algebra.matmul(x, imp.emit(permute_dims(weight))))
    return out if bias is None else imp.emit(binary.add(out, bias))


@converter("addmm")
def _addmm(imp, node):
    bias, lhs, rhs, beta, alpha = args(imp, node, ("input", REQUIRED), ("mat1", REQUIRED),
                                       ("mat2", REQUIRED), ("beta", 1), ("alpha", 1))
    out = imp.emit(linear_algebra.matmul(lhs, rhs))
    if alpha != 1:
        out = imp.emit(binary.multiply(out, alpha))
    if beta != 1:
        bias = imp.emit(binary.multiply(bias, beta))
    return imp.emit(binary.add(out, bias))


# -- values of other kinds ------------------------------------------------------------------
@converter("getattr")
def _getattr(imp, node):
    obj, attr = args(imp, node, ("input", REQUIRED), ("name", REQUIRED))
    if is_tensor(obj) and attr == "shape":
        return tuple(tensor_sinfo(obj).shape_values)
    if is_tensor(obj) and attr == "dtype":
        return str(tensor_sinfo(obj).dtype)
    if is_tensor(obj) and attr == "ndim":
        return rank(obj)
    if is_tensor(obj) and attr == "T":  # all the axes reversed
        reverse = list(range(rank(obj)))[::-1]
        return obj if rank(obj) < 2 else imp.emit(permute_dims(obj, reverse))
    raise TypeError(f"attribute {attr!r} of a {type(obj).__name__} is not supported; "
                    "expected shape, dtype, ndim or T of a tensor")


@converter("size", "sym_size")
def _size(imp, node):
    x, dim = args(imp, node, ("input", REQUIRED), ("dim", None))
    shape = tensor_sinfo(x).shape_values
    if shape is None:
        raise TypeError("the shape of the input is unknown")
    shape = tuple(_as_int(d) for d in shape)
    return shape if dim is None else shape[axis_list(dim, len(shape))[0]]


def _as_int(dim):
    value = getattr(dim, "value", None)
    return value if isinstance(value, int) and isinstance(dim, PrimExpr) else dim
