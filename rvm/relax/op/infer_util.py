"""Helpers shared by operator struct info inference: argument checks, attributes, dimensions
and broadcasting.

Errors name the operator, the argument or attribute, and what was expected
versus found: ``relax.nn.conv2d: argument 'weight' expects a rank-4 tensor, got rank 3``.
"""
import operator

from rvm.ir.expr import PrimExpr
from rvm.ir.base import structural_equal
from rvm.relax.op.registry import attr_value
from rvm.relax.struct_info import TensorStructInfo
from rvm.tir import op as tir_op
from rvm.tir.arith import simplify_size
from rvm.tir.expr import IntImm
from rvm.tir.expr_printer import dim_text


def tensor_arg(call, index, op_name, name=None):
    """The TensorStructInfo of argument ``index``; a missing argument is a ValueError and an
    argument of another kind a TypeError (as TVM's), both naming the op."""
    if index >= len(call.args):
        raise ValueError(f"{op_name} expects at least {index + 1} argument(s), got "
                         f"{len(call.args)}")
    sinfo = call.args[index].struct_info_
    if not isinstance(sinfo, TensorStructInfo):
        what = f"'{name}'" if name else str(index)
        raise TypeError(f"{op_name}: argument {what} must be a tensor, got struct info "
                         f"{sinfo!r}")
    return sinfo


def check_arity(call, count, op_name):
    """Raises ValueError unless ``call`` has ``count`` arguments (an int or a range)."""
    ok = len(call.args) in count if isinstance(count, range) else len(call.args) == count
    if not ok:
        expected = (f"{count.start} to {count.stop - 1}" if isinstance(count, range)
                    else str(count))
        raise ValueError(f"{op_name} expects {expected} argument(s), got {len(call.args)}")


attr = attr_value  # the attribute of a call, or the operator's declared default


def check_rank(sinfo, ndim, op_name, name):
    """Raises ValueError unless the tensor ``name`` has rank ``ndim`` (or an unknown rank)."""
    if sinfo.ndim not in (-1, ndim):
        raise ValueError(f"{op_name}: argument '{name}' expects a rank-{ndim} tensor, got rank "
                         f"{sinfo.ndim}")


def check_float(sinfo, op_name, name="data"):
    """Raises ValueError unless the tensor ``name`` has a float dtype (or an unknown one)."""
    if sinfo.dtype is not None and not sinfo.dtype.is_float:
        raise ValueError(f"{op_name} expects a float tensor for '{name}', got {sinfo.dtype}")


def same_dim(a, b):
    """Whether two dimension expressions are known to be equal."""
    if isinstance(a, IntImm) and isinstance(b, IntImm):
        return a.value == b.value
    return a is b or structural_equal(a, b, map_free_vars=False)


def dim_value(dim):
    """The int value of a constant dimension, else None."""
    return dim.value if isinstance(dim, IntImm) else None


def dims_text(values):
    """A shape as text for error messages: ``[2, n, 4]``."""
    return "[" + ", ".join(dim_text(d) for d in values) + "]"


def as_dim(value):
    """An int64 dimension expression from an int or a PrimExpr, simplified knowing that the
    symbolic dimensions in it are non-negative (``min(n, 2 ** 63 - 1)`` is ``n``)."""
    if isinstance(value, PrimExpr):
        if value.dtype != "int64":
            value = tir_op.cast(value, "int64")
        return simplify_size(value)
    return IntImm("int64", operator.index(value))


def check_dim_match(a, b, op_name, what):
    """Raises ValueError when two dimensions are both constant and differ."""
    if not same_dim(a, b) and dim_value(a) is not None and dim_value(b) is not None:
        raise ValueError(f"{op_name}: {what}: expected {dim_value(a)}, got {dim_value(b)}")


def unify_dtype(a, b, op_name):
    """The common dtype of two operands (None if either is unknown); a mismatch is a TypeError,
    as in TVM."""
    if a is None or b is None:
        return None
    if a != b:
        raise TypeError(f"{op_name}: operand dtypes differ, {a} vs {b}; expected equal dtypes "
                         "(insert astype)")
    return a


def broadcast_shapes(lhs, rhs, op_name):
    """The numpy-broadcast of two dimension tuples; a pair of unknown symbolic dimensions
    that differ makes the result None (unknown shape, same rank)."""
    ndim = max(len(lhs), len(rhs))
    lhs = (None,) * (ndim - len(lhs)) + tuple(lhs)
    rhs = (None,) * (ndim - len(rhs)) + tuple(rhs)
    out = []
    for i, (a, b) in enumerate(zip(lhs, rhs)):
        if a is None or dim_value(a) == 1:
            out.append(b if b is not None else a)
        elif b is None or dim_value(b) == 1:
            out.append(a)
        elif same_dim(a, b):
            out.append(a)
        elif dim_value(a) is not None and dim_value(b) is not None:
            raise ValueError(f"{op_name}: shapes cannot broadcast: dimension {i} is "
                             f"{dim_value(a)} vs {dim_value(b)}")
        else:
            return None
    return out


def broadcast_sinfo(lhs, rhs, op_name, dtype=None):
    """The TensorStructInfo of an elementwise op on two tensors."""
    dtype = dtype if dtype is not None else unify_dtype(lhs.dtype, rhs.dtype, op_name)
    lv, rv = lhs.shape_values, rhs.shape_values
    if lv is not None and rv is not None:
        shape = broadcast_shapes(lv, rv, op_name)
        if shape is not None:
            return TensorStructInfo(shape, dtype)
    ndim = -1 if lhs.ndim == -1 or rhs.ndim == -1 else max(lhs.ndim, rhs.ndim)
    return TensorStructInfo(None, dtype, ndim)


def normalize_axis(axis, ndim, op_name):
    """``axis`` in [0, ndim) (negative counts from the end); ValueError when out of range."""
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{op_name}: axis {axis} is out of range for a rank-{ndim} tensor")
    return axis + ndim if axis < 0 else axis


def normalize_axes(axes, ndim, op_name):
    """Each axis of ``axes`` in [0, ndim); repeated axes are an error."""
    out = [normalize_axis(a, ndim, op_name) for a in axes]
    if len(set(out)) != len(out):
        raise ValueError(f"{op_name}: repeated axes in {list(axes)}")
    return out


def with_shape(sinfo, values, dtype=None):
    """A TensorStructInfo of ``values`` (simplified dims; None: unknown shape of the same rank
    as ``sinfo``) and ``dtype`` (default: ``sinfo``'s)."""
    dtype = sinfo.dtype if dtype is None else dtype
    if values is None:
        return TensorStructInfo(None, dtype, sinfo.ndim)
    return TensorStructInfo([as_dim(v) for v in values], dtype)
