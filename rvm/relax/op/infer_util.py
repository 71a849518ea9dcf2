"""Helpers shared by operator struct info inference: argument checks and broadcasting."""
import operator

from rvm.ir.structural import structural_equal
from rvm.relax.struct_info import TensorStructInfo
from rvm.tir.expr import IntImm


def tensor_arg(call, index, op_name):
    """The TensorStructInfo of argument ``index`` (ValueError naming the op otherwise)."""
    if index >= len(call.args):
        raise ValueError(f"{op_name} expects at least {index + 1} argument(s), got "
                         f"{len(call.args)}")
    sinfo = call.args[index].struct_info_
    if not isinstance(sinfo, TensorStructInfo):
        raise ValueError(f"{op_name}: argument {index} must be a tensor, got struct info "
                         f"{sinfo!r}")
    return sinfo


def check_arity(call, count, op_name):
    """Raises ValueError unless ``call`` has ``count`` arguments."""
    if len(call.args) != count:
        raise ValueError(f"{op_name} expects {count} argument(s), got {len(call.args)}")


def same_dim(a, b):
    """Whether two dimension expressions are known to be equal."""
    if isinstance(a, IntImm) and isinstance(b, IntImm):
        return a.value == b.value
    return a is b or structural_equal(a, b, map_free_vars=False)


def dim_value(dim):
    """The int value of a constant dimension, else None."""
    return dim.value if isinstance(dim, IntImm) else None


def unify_dtype(a, b, op_name):
    """The common dtype of two operands (None if either is unknown); mismatches are errors."""
    if a is None or b is None:
        return None
    if a != b:
        raise ValueError(f"{op_name}: operand dtypes differ, {a} vs {b}; expected equal dtypes "
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
