"""Helpers shared by the operator definitions: named index functions, shape checks."""
import inspect

from rvm.ir.expr import PrimExpr
from rvm.runtime.data_type import DataType
from rvm.te.operation import compute
from rvm.tir import op as _op
from rvm.tir.expr import IntImm


def named(fcompute, names):
    """``fcompute`` taking its index arguments as ``*indices``, presented to te.compute
    with the parameter ``names`` (the loop and block variable names of the kernel)."""

    def wrapper(*indices):
        return fcompute(*indices)

    wrapper.__signature__ = inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names])
    return wrapper


def axis_names(prefix, ndim):
    """``["ax0", "ax1", ...]``."""
    return [f"{prefix}{k}" for k in range(ndim)]


def const_value(dim):
    """The int of a constant dimension, else None."""
    if isinstance(dim, IntImm):
        return dim.value
    if isinstance(dim, int):
        return dim
    return None


def normalize_axis(axis, ndim, what):
    """``axis`` (negative allowed) as an index in ``[0, ndim)``."""
    if not -ndim <= axis < ndim:
        raise ValueError(f"{what}: axis {axis} is out of range for a tensor of rank {ndim}")
    return axis % ndim


def same_dim(a, b):
    """Whether two dimensions are provably the same (equal constants or the same object)."""
    ca, cb = const_value(a), const_value(b)
    if ca is not None and cb is not None:
        return ca == cb
    return isinstance(a, PrimExpr) and a.same_as(b)


def accumulation_dtype(dtype):
    """The type sums of ``dtype`` values accumulate in: float32 for the narrow floats
    (float16, bfloat16, float8 ...), which kernels compute in float32 and round once when
    the result is stored rather than at every step of a reduction; ``dtype`` otherwise."""
    return "float32" if DataType(str(dtype)).is_narrow_float else str(dtype)


def narrowed(tensor, dtype, name):
    """``tensor`` rounded elementwise to ``dtype`` (``tensor`` itself when it has it)."""
    if str(tensor.dtype) == str(dtype):
        return tensor
    return compute(tensor.shape, named(lambda *i: _op.cast(tensor[i], dtype),
                                       axis_names("ax", len(tensor.shape))), name=name)
