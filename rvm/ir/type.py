"""Types shared by the IR dialects, as TVM's ``tvm.ir`` has them: ``Type``, ``PrimType``,
``PointerType``, ``TupleType`` and ``FuncType``.

Relax describes values by StructInfo (shapes included); a Type is the coarser
static kind of a value that TVM keeps beside it (``relax.analysis.
get_static_type``). Types are IR nodes: structural equality and hashing
compare them field by field.

>>> FuncType([PrimType("int32")], TupleType([]))
FuncType([PrimType('int32')], TupleType([]))
"""
from rvm.ir.base import structural_equal, structural_hash
from rvm.ir.node import Node
from rvm.runtime.data_type import DataType


class Type(Node):
    """Base class of types (TVM's ``tvm.ir.Type``). Types compare and hash structurally, as
    TVM's do (``PrimType("int32") == PrimType("int32")``); ``same_as`` is identity."""

    def __eq__(self, other):
        return isinstance(other, Type) and structural_equal(self, other)

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return structural_hash(self)

    def __repr__(self):
        return self._fallback_repr()

    def _fallback_repr(self):
        return f"{type(self).__name__}()"


def _check_types(values, who):
    if isinstance(values, Type) or not hasattr(values, "__iter__"):
        raise TypeError(f"{who}: expected a list of Types, got {type(values).__name__}")
    values = tuple(values)
    for i, value in enumerate(values):
        if not isinstance(value, Type):
            raise TypeError(f"{who}: entry {i} must be a Type, got {type(value).__name__}")
    return values


class PrimType(Type):
    """The type of a scalar of ``dtype``."""

    _fields = ("dtype",)

    def __init__(self, dtype, span=None):
        self.dtype = DataType(dtype)
        self.span = span

    def _fallback_repr(self):
        return f"PrimType({str(self.dtype)!r})"


class PointerType(Type):
    """The type of a pointer to ``element_type`` values in memory of ``storage_scope`` (the
    type annotation of a TIR handle variable, TVM's ``tvm.ir.PointerType``).

    >>> PointerType(PrimType("float32"), "global.texture").storage_scope
    'global.texture'
    """

    _fields = ("element_type", "storage_scope")

    def __init__(self, element_type, storage_scope="", span=None):
        if not isinstance(element_type, Type):
            raise TypeError(f"PointerType: element_type must be a Type, got "
                            f"{type(element_type).__name__}")
        if not isinstance(storage_scope, str):
            raise TypeError(f"PointerType: storage_scope must be a str, got "
                            f"{type(storage_scope).__name__}")
        self.element_type = element_type
        self.storage_scope = storage_scope
        self.span = span

    def _fallback_repr(self):
        return f"PointerType({self.element_type!r}, {self.storage_scope!r})"


class TupleType(Type):
    """The type of a tuple whose fields have ``fields`` (types)."""

    _fields = ("fields",)

    def __init__(self, fields, span=None):
        self.fields = _check_types(fields, "TupleType")
        self.span = span

    @staticmethod
    def empty():
        """The type of the empty tuple (TVM's ``TupleType.empty()``)."""
        return TupleType([])

    def _fallback_repr(self):
        return f"TupleType({list(self.fields)!r})"


class FuncType(Type):
    """The type of a function from ``arg_types`` to ``ret_type``."""

    _fields = ("arg_types", "ret_type")

    def __init__(self, arg_types, ret_type, span=None):
        self.arg_types = _check_types(arg_types, "FuncType")
        if not isinstance(ret_type, Type):
            raise TypeError(f"FuncType: ret_type must be a Type, got {type(ret_type).__name__}")
        self.ret_type = ret_type
        self.span = span

    def _fallback_repr(self):
        return f"FuncType({list(self.arg_types)!r}, {self.ret_type!r})"
