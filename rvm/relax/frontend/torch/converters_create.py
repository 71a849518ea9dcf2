"""Converters of PyTorch's creation and masking operators: ``arange`` (with symbolic
bounds), ``full``/``ones``/``zeros`` and their ``_like``/``new_*`` forms, ``triu``/``tril``,
``where``, ``masked_fill``, ``rsub``, ``type_as``, ``min``/``max`` of two tensors, and the
guard nodes torch.export records (``_assert_*``), which are dropped.

Transformer models build their attention masks from these at run time, from the
(possibly symbolic) sequence length, so sizes are ints or ``tir`` expressions.
"""
import operator

from rvm.ir.expr import PrimExpr, RelaxExpr
from rvm.relax.expr import const
from rvm.relax.op import binary, create, manipulate, search, statistical, unary
from rvm.relax.frontend.torch.converters import (
    REQUIRED, args, binary_op, converter, is_tensor, tensor_sinfo,
)
from rvm.relax.frontend.torch.converters_shape import _dim, _shape_args
from rvm.relax.frontend.torch.importer import torch_dtype


def _dtype(value, default=None):
    """The rvm dtype of a ``dtype=`` argument (None keeps ``default``)."""
    return default if value is None else torch_dtype(value)


def _scalar_dtype(value):
    """torch's default dtype of a tensor created from the Python scalar ``value``."""
    if isinstance(value, bool):
        return "bool"
    return "int64" if isinstance(value, int) else "float32"


def _bound(value, what):
    value = getattr(value, "value", value) if not isinstance(value, PrimExpr) else value
    if isinstance(value, bool) or not isinstance(value, (int, float, PrimExpr)):
        raise TypeError(f"arange: '{what}' must be a number or a symbolic size, got "
                        f"{type(value).__name__}")
    return value


@converter("arange")
def _arange(imp, node):
    bounds = [imp.value(a) for a in node.args]
    if not 1 <= len(bounds) <= 3:
        raise TypeError(f"arange takes 1 to 3 positional bounds, got {len(bounds)}")
    for key in ("start", "end", "step"):
        if key in node.kwargs:
            bounds.append(imp.value(node.kwargs[key]))
    if len(bounds) == 1:
        bounds = [0] + bounds
    start, end, step = [_bound(b, w) for b, w in zip(bounds + [1], ("start", "end", "step"))]
    floats = any(isinstance(b, float) or (isinstance(b, PrimExpr) and b.dtype.is_float)
                 for b in (start, end, step))
    dtype = _dtype(imp.value(node.kwargs.get("dtype")), "float32" if floats else "int64")
    return imp.emit(create.arange(start, end, step, dtype=dtype))


def _fill(imp, shape, value, dtype):
    if is_tensor(value):
        value = imp.emit(unary.astype(value, dtype))
    return imp.emit(create.full(shape, value if is_tensor(value) else const(value, dtype),
                                dtype=dtype))


@converter("full", "new_full")
def _full(imp, node):
    new = getattr(node.target, "__name__", "").startswith("new_full")
    first = 1 if new else 0
    size = imp.value(node.args[first] if len(node.args) > first else node.kwargs["size"])
    value = imp.value(node.args[first + 1] if len(node.args) > first + 1
                      else node.kwargs["fill_value"])
    default = tensor_sinfo(imp.value(node.args[0])).dtype if new else _scalar_dtype(value)
    dtype = _dtype(imp.value(node.kwargs.get("dtype")), str(default))
    size = [size] if isinstance(size, (int, PrimExpr)) else list(size)
    return _fill(imp, [_dim(d) for d in size], value, dtype)


def _constant(fill):
    def convert(imp, node):
        name = getattr(node.target, "__name__", str(node.target))
        if name.startswith("new_"):
            like = imp.value(node.args[0])
            shape = _shape_args(imp, node, first=1)
            default = str(tensor_sinfo(like).dtype)
        else:
            shape = _shape_args(imp, node, first=0)
            default = "float32"
        dtype = _dtype(imp.value(node.kwargs.get("dtype")), default)
        return imp.emit(create.full(shape, const(fill, dtype), dtype=dtype))

    return convert


converter("ones", "new_ones")(_constant(1))
converter("zeros", "new_zeros", "new_empty", "empty")(_constant(0))


def _like(fill):
    def convert(imp, node):
        x = imp.value(node.args[0])
        if fill is None:
            value = imp.value(node.args[1] if len(node.args) > 1 else node.kwargs["fill_value"])
        else:
            value = fill
        dtype = _dtype(imp.value(node.kwargs.get("dtype")), str(tensor_sinfo(x).dtype))
        return imp.emit(create.full_like(x, const(value, dtype), dtype=dtype))

    return convert


converter("full_like")(_like(None))
converter("ones_like")(_like(1))
converter("zeros_like", "empty_like")(_like(0))


def triangle(imp, x, diagonal, upper):
    """Emits ``triu``/``tril`` of the last two axes of ``x``: the elements with
    ``col - row >= diagonal`` (upper) or ``<= diagonal`` (lower) kept, the others zero."""
    shape = tensor_sinfo(x).shape_values
    if shape is None or len(shape) < 2:
        raise ValueError(f"{'triu' if upper else 'tril'} needs a tensor of rank >= 2")
    rows = imp.emit(manipulate.expand_dims(imp.emit(create.arange(0, shape[-2], 1)), [1]))
    cols = imp.emit(create.arange(0, shape[-1], 1))
    offset = imp.emit(binary.subtract(cols, rows))
    compare = binary.greater_equal if upper else binary.less_equal
    keep = imp.emit(compare(offset, const(int(diagonal), "int64")))
    return imp.emit(search.where(keep, x, const(0, tensor_sinfo(x).dtype)))


@converter("triu", "tril")
def _triangle(imp, node):
    x, diagonal = args(imp, node, ("input", REQUIRED), ("diagonal", 0))
    upper = getattr(node.target, "__name__", str(node.target)).startswith("triu")
    return triangle(imp, x, diagonal, upper)


def _operand(imp, value, dtype):
    if is_tensor(value):
        return value if tensor_sinfo(value).dtype == dtype else imp.emit(unary.astype(value,
                                                                                      dtype))
    return const(value, dtype)


@converter("where")
def _where(imp, node):
    if len(node.args) + len(node.kwargs) == 1:
        raise ValueError("where(condition) alone gives the indices of the True elements, a "
                         "shape that depends on the data; expected where(condition, input, "
                         "other)")
    cond, x, y = args(imp, node, ("condition", REQUIRED), ("input", REQUIRED),
                      ("other", REQUIRED))
    if is_tensor(x):
        dtype = tensor_sinfo(x).dtype
    elif is_tensor(y):
        dtype = tensor_sinfo(y).dtype
    else:
        dtype = _scalar_dtype(x if isinstance(x, float) else y)
    return imp.emit(search.where(cond, _operand(imp, x, dtype), _operand(imp, y, dtype)))


@converter("masked_fill", "masked_fill_")
def _masked_fill(imp, node):
    x, mask, value = args(imp, node, ("input", REQUIRED), ("mask", REQUIRED),
                          ("value", REQUIRED))
    if tensor_sinfo(mask, "mask").dtype != "bool":
        raise TypeError(f"masked_fill: the mask must be a bool tensor, got "
                        f"{tensor_sinfo(mask).dtype}")
    dtype = tensor_sinfo(x).dtype
    return imp.emit(search.where(mask, _operand(imp, value, dtype), x))


@converter("rsub")
def _rsub(imp, node):
    x, other, alpha = args(imp, node, ("input", REQUIRED), ("other", REQUIRED), ("alpha", 1))
    return binary_op(imp, binary.subtract, operator.sub, other, x, alpha)  # other - x * alpha


@converter("type_as")
def _type_as(imp, node):
    x, other = args(imp, node, ("input", REQUIRED), ("other", REQUIRED))
    dtype = tensor_sinfo(other, "other").dtype
    return x if tensor_sinfo(x).dtype == dtype else imp.emit(unary.astype(x, dtype))


def _min_max(binary_fn, reduce_fn):
    def convert(imp, node):
        x = imp.value(node.args[0])
        other = imp.value(node.args[1]) if len(node.args) > 1 else node.kwargs.get("other")
        if other is None:
            return imp.emit(reduce_fn(x))
        if isinstance(other, RelaxExpr):
            return imp.emit(binary_fn(x, other))
        raise ValueError("min/max over a dimension (values and indices) is not supported; "
                         "expected min(x), min(x, other) or amin(x, dim)")

    return convert


converter("min")(_min_max(binary.minimum, statistical.min))
converter("max")(_min_max(binary.maximum, statistical.max))


@converter("_assert_tensor_metadata", "_assert_scalar", "_assert_async",
           "sym_constrain_range_for_size", "sym_constrain_range")
def _guard(imp, node):
    return None  # torch's own checks of what it traced; the signature carries the shapes

