"""StructInfo: what Relax knows statically about a value (kind, shape, dtype).

Struct info is Relax's type system: ``TensorStructInfo((n, 4), "float32")``
says "a float32 tensor of rank 2 whose first dimension is the symbolic
``n``". Unknown parts stay unknown: ``TensorStructInfo(ndim=2)`` is a rank-2
tensor of unknown shape and dtype, ``TensorStructInfo()`` any tensor.
"""
import numbers
import operator

import numpy as np

from rvm.ir.expr import PrimExpr, RelaxExpr
from rvm.ir.node import Node
from rvm.runtime.data_type import DataType
from rvm.tir.expr import FloatImm, IntImm


def _dtype_or_none(dtype, who):
    if dtype is None or dtype == "":
        return None
    try:
        return DataType(dtype)
    except ValueError as err:
        raise ValueError(f"{who}: {err}") from None


def convert_shape_values(values, who):
    """Shape dimensions as a tuple of int64 PrimExprs (ints become IntImm)."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{who}: expected a sequence of dimensions, got {values!r}")
    out = []
    for i, dim in enumerate(values):
        if isinstance(dim, IntImm):
            out.append(dim if dim.dtype == "int64" else IntImm("int64", dim.value))
        elif isinstance(dim, PrimExpr):
            if dim.dtype != "int64":
                raise TypeError(f"{who}: dimension {i} must be an int64 expression, got "
                                f"{dim!r} of dtype {dim.dtype}")
            out.append(dim)
        else:
            try:
                value = operator.index(dim)
            except TypeError:
                raise TypeError(f"{who}: dimension {i} must be an int or an int64 PrimExpr, "
                                f"got {dim!r} ({type(dim).__name__})") from None
            out.append(IntImm("int64", value))
    return tuple(out)


def convert_prim_value(value, who):
    """A PrimExpr from a PrimExpr or a Python/numpy scalar (ints become int64)."""
    if isinstance(value, PrimExpr):
        return value
    if isinstance(value, (bool, np.bool_)):
        return IntImm("bool", int(value))
    if isinstance(value, numbers.Integral):
        return IntImm("int64", int(value))
    if isinstance(value, numbers.Real):
        return FloatImm("float64", float(value))
    raise TypeError(f"{who}: expected a PrimExpr or a scalar, got {type(value).__name__}")



class StructInfo(Node):
    """Base of all struct info."""

    def same_as(self, other):
        return self is other


class ObjectStructInfo(StructInfo):
    """Any value at all (the top of the struct info lattice).

    >>> ObjectStructInfo()._fields
    ()
    """

    _fields = ()

    def __init__(self, span=None):
        self.span = span


class PrimStructInfo(StructInfo):
    """A scalar of ``dtype``, optionally with a known (possibly symbolic) ``value``.

    >>> PrimStructInfo("int64").dtype
    DataType('int64')
    """

    _fields = ("value", "dtype")

    def __init__(self, dtype=None, value=None, span=None):
        if value is not None:
            value = convert_prim_value(value, "PrimStructInfo")
            if dtype is not None and DataType(dtype) != value.dtype:
                raise ValueError(f"PrimStructInfo: dtype {dtype} differs from the value's "
                                 f"dtype {value.dtype}")
            dtype = value.dtype
        self.value = value
        self.dtype = _dtype_or_none(dtype, "PrimStructInfo")
        self.span = span


class ShapeStructInfo(StructInfo):
    """A shape value: ``values`` (int64 PrimExprs) when known, else just ``ndim`` (-1: unknown).

    >>> ShapeStructInfo([2, 3]).ndim
    2
    """

    _fields = ("values", "ndim")

    def __init__(self, values=None, ndim=-1, span=None):
        if values is not None:
            values = convert_shape_values(values, "ShapeStructInfo")
            if ndim not in (-1, len(values)):
                raise ValueError(f"ShapeStructInfo: ndim {ndim} does not match the "
                                 f"{len(values)} values given")
            ndim = len(values)
        self.values = values
        self.ndim = _check_ndim(ndim, "ShapeStructInfo")
        self.span = span


def _check_ndim(ndim, who):
    try:
        ndim = operator.index(ndim)
    except TypeError:
        raise TypeError(f"{who}: ndim must be an int, got {type(ndim).__name__}") from None
    if ndim < -1:
        raise ValueError(f"{who}: ndim must be >= 0, or -1 for unknown; got {ndim}")
    return ndim


class TensorStructInfo(StructInfo):
    """A tensor with an optional ``shape``, ``dtype`` and rank.

    ``shape`` is None, a sequence of ints/int64 PrimExprs (made into a
    ShapeExpr), a ShapeExpr, or a Relax Var holding a shape. ``ndim`` is
    derived from a known shape and -1 when unknown.

    >>> TensorStructInfo((128, 128), "float32").ndim
    2
    >>> TensorStructInfo(ndim=3).shape is None
    True
    """

    _fields = ("shape", "dtype", "ndim")

    def __init__(self, shape=None, dtype=None, ndim=-1, span=None):
        if shape is not None:
            if not isinstance(shape, RelaxExpr):
                shape = self._ShapeExpr(shape)  # attached by rvm.relax.expr, which defines it
            shape_ndim = _shape_expr_ndim(shape)
            if ndim != -1 and shape_ndim != -1 and ndim != shape_ndim:
                raise ValueError(f"TensorStructInfo: ndim {ndim} does not match the shape's "
                                 f"rank {shape_ndim}")
            if shape_ndim != -1:
                ndim = shape_ndim
        self.shape = shape
        self.dtype = _dtype_or_none(dtype, "TensorStructInfo")
        self.ndim = _check_ndim(ndim, "TensorStructInfo")
        self.span = span

    @property
    def is_unknown_ndim(self):
        """Whether the rank is unknown."""
        return self.ndim == -1

    @property
    def is_unknown_dtype(self):
        """Whether the dtype is unknown."""
        return self.dtype is None

    @property
    def shape_values(self):
        """The dimensions as a tuple of PrimExprs when statically known, else None."""
        if self.shape is None:
            return None
        sinfo = self.shape.struct_info_
        if isinstance(sinfo, ShapeStructInfo):
            return sinfo.values
        return None


def _shape_expr_ndim(shape):
    sinfo = shape.struct_info_
    if not isinstance(sinfo, ShapeStructInfo):
        raise TypeError(f"TensorStructInfo: shape must be a shape expression or a Var holding a "
                        f"shape; got {type(shape).__name__} with struct info {sinfo!r}")
    return sinfo.ndim


class TupleStructInfo(StructInfo):
    """A tuple whose elements have the struct info in ``fields``.

    >>> len(TupleStructInfo([ObjectStructInfo(), PrimStructInfo("int64")]).fields)
    2
    """

    _fields = ("fields",)

    def __init__(self, fields, span=None):
        fields = tuple(fields)
        for i, field in enumerate(fields):
            if not isinstance(field, StructInfo):
                raise TypeError(f"TupleStructInfo: field {i} must be a StructInfo, got "
                                f"{type(field).__name__}")
        self.fields = fields
        self.span = span


class FuncStructInfo(StructInfo):
    """A function from ``params`` (struct infos) to ``ret``; ``params`` None means opaque.

    ``purity`` says whether calling it has no visible side effects.

    >>> f = FuncStructInfo([TensorStructInfo(ndim=1)], TensorStructInfo(ndim=1))
    >>> f.is_opaque, f.purity
    (False, True)
    """

    _fields = ("params", "ret", "purity")
    _binding_fields = ("params",)  # defines the symbolic variables of its signature, as TVM

    def __init__(self, params, ret, purity=True, span=None):
        if params is not None:
            params = tuple(params)
            for i, param in enumerate(params):
                if not isinstance(param, StructInfo):
                    raise TypeError(f"FuncStructInfo: param {i} must be a StructInfo, got "
                                    f"{type(param).__name__}")
        if not isinstance(ret, StructInfo):
            raise TypeError(f"FuncStructInfo: ret must be a StructInfo, got {type(ret).__name__}")
        self.params = params
        self.ret = ret
        self.purity = bool(purity)
        self.span = span

    @staticmethod
    def opaque_func(ret=None, purity=True):
        """A function of unknown parameters returning ``ret`` (default: any object)."""
        return FuncStructInfo(None, ret if ret is not None else ObjectStructInfo(), purity)

    @property
    def is_opaque(self):
        """Whether the parameters are unknown."""
        return self.params is None
