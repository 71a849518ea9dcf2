"""The types of Relax values, distinct from their StructInfo, as TVM 0.21 has them:
``TensorType``, ``ShapeType``, ``ObjectType``, ``PackedFuncType`` (plus ``tvm.ir``'s
``TupleType``, ``FuncType`` and ``PrimType``), and ``get_static_type``, the type a struct
info erases to.

>>> from rvm.relax.struct_info import TensorStructInfo
>>> get_static_type(TensorStructInfo((4, 4), "float32"))
TensorType(ndim=2, dtype='float32')
"""
from rvm.ir.type import FuncType, PrimType, TupleType, Type
from rvm.relax import struct_info as _si
from rvm.runtime.data_type import DataType


def _ndim(ndim, who):
    if isinstance(ndim, bool) or not isinstance(ndim, int) or ndim < -1:
        raise ValueError(f"{who}: ndim must be an int >= -1 (-1: unknown), got {ndim!r}")
    return ndim


class ShapeType(Type):
    """The type of a shape of ``ndim`` dimensions (-1: unknown)."""

    _fields = ("ndim",)

    def __init__(self, ndim=-1, span=None):
        self.ndim = _ndim(ndim, "ShapeType")
        self.span = span

    def _fallback_repr(self):
        return f"ShapeType(ndim={self.ndim})"


class ObjectType(Type):
    """The type of any runtime object (the base of every Relax value)."""

    def __init__(self, span=None):
        self.span = span


class TensorType(Type):
    """The type of a tensor of ``ndim`` dimensions (-1: unknown) and ``dtype`` (None or
    "void": unknown); TVM's ``relax.TensorType`` (formerly DynTensorType)."""

    _fields = ("ndim", "dtype")

    def __init__(self, ndim=-1, dtype="float32", span=None):
        self.ndim = _ndim(ndim, "TensorType")
        self.dtype = None if dtype in (None, "", "void") else DataType(dtype)
        self.span = span

    @property
    def is_unknown_ndim(self):
        """Whether the number of dimensions is unknown."""
        return self.ndim == -1

    @property
    def is_unknown_dtype(self):
        """Whether the dtype is unknown."""
        return self.dtype is None

    def _fallback_repr(self):
        dtype = "void" if self.dtype is None else str(self.dtype)
        return f"TensorType(ndim={self.ndim}, dtype={dtype!r})"


class PackedFuncType(Type):
    """The type of an ExternFunc (a packed function found by name)."""

    def __init__(self, span=None):
        self.span = span


def get_static_type(sinfo):
    """The Type ``sinfo`` (a StructInfo) erases to: shapes and values are dropped."""
    if isinstance(sinfo, _si.TensorStructInfo):
        return TensorType(sinfo.ndim, sinfo.dtype)
    if isinstance(sinfo, _si.ShapeStructInfo):
        return ShapeType(sinfo.ndim)
    if isinstance(sinfo, _si.PrimStructInfo):
        return PrimType(sinfo.dtype) if sinfo.dtype is not None else ObjectType()
    if isinstance(sinfo, _si.TupleStructInfo):
        return TupleType([get_static_type(f) for f in sinfo.fields])
    if isinstance(sinfo, _si.FuncStructInfo):
        if sinfo.params is None:
            return PackedFuncType()
        return FuncType([get_static_type(p) for p in sinfo.params], get_static_type(sinfo.ret))
    if isinstance(sinfo, _si.ObjectStructInfo):
        return ObjectType()
    raise TypeError(f"get_static_type expects a StructInfo, got {type(sinfo).__name__}")


__all__ = ["FuncType", "ObjectType", "PackedFuncType", "PrimType", "ShapeType", "TensorType",
           "TupleType", "Type", "get_static_type"]
