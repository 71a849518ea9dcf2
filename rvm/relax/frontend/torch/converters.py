"""Converters from PyTorch operators to Relax operators, by name (``"add"``, ``"linear"``).

A converter is ``fn(importer, node) -> value``: it reads the node's
arguments (positional as PyTorch passes them, or by keyword), emits Relax
operators and returns the node's value. The same converter serves a torch
function (``torch.add``), a tensor method (``x.add``), an ``operator``
function (``a + b``, also on symbolic sizes) and the ATen operator of an
exported program (``aten.add.Tensor``) when their arguments agree.
``CONVERTERS`` holds them all; this module has the elementwise, reduction and
linear-algebra ones, ``converters_shape`` and ``converters_nn`` the others.
"""
import math
import operator

from rvm.ir.expr import PrimExpr, RelaxExpr
from rvm.relax.op import binary, linear_algebra, statistical, unary
from rvm.relax.op.manipulate import permute_dims
from rvm.relax.op.nn import activation
from rvm.relax.struct_info import TensorStructInfo
from rvm.relax.frontend.torch.importer import torch_dtype

CONVERTERS = {}
REQUIRED = object()


def converter(*names):
    """Decorator: registers ``fn(importer, node)`` under each of ``names``."""

    def register(fn):
        for name in names:
            CONVERTERS[name] = fn
        return fn

    return register


def args(imp, node, *spec):
    """The values of the node's arguments described by ``spec``: ``(name, default)`` pairs in
    PyTorch's positional order (``REQUIRED`` for no default)."""
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
    """``dims`` (an int, a list of ints, or None for all) as non-negative axes."""
    if dims is None:
        return list(range(ndim))
    dims = [dims] if isinstance(dims, int) else list(dims)
    return [d % ndim if ndim else d for d in dims]


# -- elementwise ----------------------------------------------------------------------------
def _binary(relax_fn, python_fn):
    def convert(imp, node):
        lhs, rhs = args(imp, node, ("input", REQUIRED), ("other", REQUIRED))
        if not isinstance(lhs, RelaxExpr) and not isinstance(rhs, RelaxExpr):
            return python_fn(lhs, rhs)  # arithmetic on sizes, possibly symbolic
        lhs, rhs = _static(lhs), _static(rhs)
        alpha = node.kwargs.get("alpha", 1)
        if alpha != 1:
            rhs = imp.emit(binary.multiply(rhs, alpha))
        lhs, rhs = promote(imp, lhs, rhs)
        return imp.emit(relax_fn(lhs, rhs))

    return convert


def _static(value):
    """A size as an int when it is one; a symbolic size next to a tensor is refused."""
    if isinstance(value, PrimExpr) and not isinstance(value, RelaxExpr):
        known = getattr(value, "value", None)
        if not isinstance(known, int):
            raise TypeError(f"a tensor combined with the symbolic size {value} is not "
                            "supported; expected a tensor or a number")
        return known
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


for _names, _relax, _python in [
        (("add", "add_", "iadd", "__add__", "__radd__"), binary.add, operator.add),
        (("sub", "sub_", "subtract", "isub", "__sub__"), binary.subtract, operator.sub),
        (("mul", "mul_", "multiply", "imul", "__mul__", "__rmul__"), binary.multiply,
         operator.mul),
        (("truediv", "__truediv__"), binary.divide, operator.truediv),
        (("floordiv", "floor_divide", "__floordiv__"), binary.floor_divide,
         operator.floordiv),
        (("pow", "__pow__"), binary.power, operator.pow),
        (("maximum",), binary.maximum, max), (("minimum",), binary.minimum, min),
        (("eq", "__eq__"), binary.equal, operator.eq), (("ne", "__ne__"), binary.not_equal,
                                                        operator.ne),
        (("lt", "__lt__"), binary.less, operator.lt), (("le",), binary.less_equal, operator.le),
        (("gt", "__gt__"), binary.greater, operator.gt),
        (("ge",), binary.greater_equal, operator.ge)]:
    converter(*_names)(_binary(_relax, _python))


@converter("div", "div_", "divide")
def _div(imp, node):
    lhs, rhs, mode = args(imp, node, ("input", REQUIRED), ("other", REQUIRED),
                          ("rounding_mode", None))
    if mode is None:
        return _binary(binary.divide, operator.truediv)(imp, node)
    if mode != "floor":
        raise ValueError(f"div: rounding_mode {mode!r} is not supported; expected None or "
                         "'floor'")
    return _binary(binary.floor_divide, operator.floordiv)(imp, node)


def _unary(relax_fn, python_fn=None):
    def convert(imp, node):
        (x,) = args(imp, node, ("input", REQUIRED))
        if python_fn is not None and not isinstance(x, RelaxExpr):
            return python_fn(x)  # arithmetic on sizes, possibly symbolic
        return imp.emit(relax_fn(x))

    return convert


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
    x, dim = args(imp, node, ("input", REQUIRED), ("dim", None))
    if dim is None:
        raise ValueError("softmax needs 'dim'")
    log = "log_softmax" in getattr(node.target, "__name__", str(node.target))
    return imp.emit((activation.log_softmax if log else activation.softmax)(x, axis=dim))


@converter("clamp", "clip", "hardtanh")
def _clamp(imp, node):
    hard = getattr(node.target, "__name__", str(node.target)).startswith("hardtanh")
    x, low, high = args(imp, node, ("input", REQUIRED), ("min", -1.0 if hard else None),
                        ("max", 1.0 if hard else None))
    low = -math.inf if low is None else low
    high = math.inf if high is None else high
    return imp.emit(unary.clip(x, low, high))


@converter("contiguous", "clone", "detach", "detach_", "identity", "alias", "lift_fresh_copy")
def _same(imp, node):
    (x,) = args(imp, node, ("input", REQUIRED))
    return x


@converter("dropout", "dropout_", "feature_dropout", "alpha_dropout")
def _dropout(imp, node):
    (x,) = args(imp, node, ("input", REQUIRED))
    return x  # inference: dropout keeps every value


@converter("to", "type", "float", "half", "double", "int", "long", "bool")
def _to(imp, node):
    name = getattr(node.target, "__name__", str(node.target)).split(".")[0]
    fixed = {"float": "float32", "half": "float16", "double": "float64", "int": "int32",
             "long": "int64", "bool": "bool"}.get(name)
    x = imp.value(node.args[0])
    dtype = fixed
    if dtype is None:
        for value in list(node.args[1:]) + [node.kwargs.get("dtype")]:
            value = imp.value(value)
            if value is not None and "torch." in str(value) and "device" not in str(value):
                dtype = torch_dtype(value)
    if dtype is None or tensor_sinfo(x).dtype == dtype:
        return x
    return imp.emit(unary.astype(x, dtype))


# -- reductions -----------------------------------------------------------------------------
def _reduce(relax_fn):
    def convert(imp, node):
        x, dim, keepdim = args(imp, node, ("input", REQUIRED), ("dim", None),
                               ("keepdim", False))
        axes = None if dim is None else axis_list(dim, rank(x))
        return imp.emit(relax_fn(x, axis=axes, keepdims=bool(keepdim)))

    return convert


for _names, _relax in [(("mean",), statistical.mean), (("sum",), statistical.sum),
                       (("amax",), statistical.max), (("amin",), statistical.min)]:
    converter(*_names)(_reduce(_relax))


# -- linear algebra -------------------------------------------------------------------------
@converter("matmul", "mm", "bmm", "__matmul__")
def _matmul(imp, node):
    lhs, rhs = args(imp, node, ("input", REQUIRED), ("other", REQUIRED))
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
    raise TypeError(f"attribute {attr!r} of a {type(obj).__name__} is not supported; "
                    "expected shape, dtype or ndim of a tensor")


@converter("size", "sym_size")
def _size(imp, node):
    x, dim = args(imp, node, ("input", REQUIRED), ("dim", None))
    shape = tensor_sinfo(x).shape_values
    if shape is None:
        raise TypeError("the shape of the input is unknown")
    shape = tuple(_as_int(d) for d in shape)
    return shape if dim is None else shape[dim]


def _as_int(dim):
    value = getattr(dim, "value", None)
    return value if isinstance(value, int) and isinstance(dim, PrimExpr) else dim
