"""Relax expressions: variables, constants, tuples, shapes, calls and branches.

Every Relax expression carries ``struct_info_`` once normalized. Leaves get
it at construction (a constant knows its shape); calls get it from their
operator's inference when a BlockBuilder normalizes them.
"""
import operator

import numpy as np

from rvm.ir.expr import RelaxExpr
from rvm.relax.struct_info import (
    convert_prim_value,
    convert_shape_values,
    FuncStructInfo,
    ObjectStructInfo,
    PrimStructInfo,
    ShapeStructInfo,
    StructInfo,
    TensorStructInfo,
    TupleStructInfo,
)
from rvm.runtime.data_type import DataType
from rvm.runtime.ndarray import NDArray, array

__all__ = [
    "Call", "Constant", "DataTypeImm", "DataflowVar", "ExternFunc", "If", "PrimValue",
    "RelaxExpr", "ShapeExpr", "StringImm", "Tuple", "TupleGetItem", "Var", "const",
    "convert_shape_values", "convert_prim_value", "get_struct_info",
]


def get_struct_info(expr):
    """The struct info of a normalized expression (ValueError when it has none)."""
    if not isinstance(expr, RelaxExpr):
        raise TypeError(f"get_struct_info expects a Relax expression, got {type(expr).__name__}")
    return expr.struct_info


def _check_expr(value, who):
    if not isinstance(value, RelaxExpr):
        raise TypeError(f"{who}: expected a Relax expression, got {type(value).__name__}")
    return value


def _set_sinfo(node, sinfo):
    object.__setattr__(node, "struct_info_", sinfo)


class Var(RelaxExpr):
    """A variable bound by a function parameter or a binding; compared up to renaming.

    >>> x = Var("x", TensorStructInfo((2, 3), "float32"))
    >>> x.name_hint, x.struct_info.ndim
    ('x', 2)
    """

    _is_var = True
    _fields = ("struct_info",)

    def __init__(self, name_hint, struct_info=None, span=None):
        if not isinstance(name_hint, str):
            raise TypeError(f"{type(self).__name__} expects a str name, got "
                            f"{type(name_hint).__name__}")
        if struct_info is not None and not isinstance(struct_info, StructInfo):
            raise TypeError(f"{type(self).__name__} '{name_hint}': struct_info must be a "
                            f"StructInfo, got {type(struct_info).__name__}")
        self.name_hint = name_hint
        self.struct_info_ = struct_info
        self.span = span

    @property
    def struct_info(self):
        """The variable's struct info (None when not annotated)."""
        return self.struct_info_

    @struct_info.setter
    def struct_info(self, value):
        self.struct_info_ = value

    def __getitem__(self, index):
        sinfo = self.struct_info_
        if isinstance(sinfo, TupleStructInfo):
            return TupleGetItem(self, index)
        raise TypeError(f"Var '{self.name_hint}' is not a tuple (struct info {sinfo!r}); "
                        "only tuple-valued variables can be indexed")

    def __repr__(self):
        return f"{type(self).__name__}({self.name_hint!r})"


class DataflowVar(Var):
    """A variable local to a dataflow block: it cannot be used after the block ends."""


class Constant(RelaxExpr):
    """A constant tensor holding an rvm NDArray.

    >>> Constant(array(np.zeros((2,), "float32"))).struct_info.dtype
    DataType('float32')
    """

    _fields = ("data",)

    def __init__(self, data, struct_info=None, span=None):
        if not isinstance(data, NDArray):
            raise TypeError(f"Constant expects an NDArray, got {type(data).__name__}; "
                            "use relax.const for numpy arrays and scalars")
        self.data = data
        if struct_info is None:
            struct_info = TensorStructInfo(tuple(data.shape), data.dtype)
        _set_sinfo(self, struct_info)
        self.span = span


def const(value, dtype=None):
    """A Constant from a numpy array, NDArray or scalar.

    ``dtype`` converts the value; it may also be a TensorStructInfo, whose
    dtype is used. Python ints become int32 and floats float32, as in TVM.

    >>> const(np.ones((2, 2), "float32")).struct_info.shape_values[0].value
    2
    >>> const(1.5).data.dtype
    DataType('float32')
    """
    if isinstance(dtype, TensorStructInfo):
        dtype = dtype.dtype
    if isinstance(value, NDArray):
        if dtype is not None and DataType(dtype) != value.dtype:
            value = array(value.numpy().astype(DataType(dtype).numpy_dtype))
        return Constant(value)
    if dtype is None and not isinstance(value, np.ndarray):
        sample = np.asarray(value)
        if sample.dtype == np.float64:
            dtype = "float32"
        elif sample.dtype == np.int64:
            dtype = "int32"
    np_dtype = DataType(dtype).numpy_dtype if dtype is not None else None
    return Constant(array(np.asarray(value, dtype=np_dtype)))


class Tuple(RelaxExpr):
    """A tuple of expressions.

    >>> len(Tuple([PrimValue(1), PrimValue(2)]))
    2
    """

    _fields = ("fields",)

    def __init__(self, fields, span=None):
        self.fields = tuple(_check_expr(f, "Tuple field") for f in fields)
        self.span = span
        sinfos = [f.struct_info_ for f in self.fields]
        if all(s is not None for s in sinfos):
            _set_sinfo(self, TupleStructInfo(sinfos))

    def __getitem__(self, index):
        return self.fields[index]

    def __len__(self):
        return len(self.fields)


class TupleGetItem(RelaxExpr):
    """Element ``index`` of a tuple-valued expression."""

    _fields = ("tuple_value", "index")

    def __init__(self, tuple_value, index, span=None):
        self.tuple_value = _check_expr(tuple_value, "TupleGetItem")
        self.index = operator.index(index)
        self.span = span
        sinfo = tuple_value.struct_info_
        if isinstance(sinfo, TupleStructInfo):
            if not 0 <= self.index < len(sinfo.fields):
                raise IndexError(f"TupleGetItem: index {self.index} is out of range for a tuple "
                                 f"of {len(sinfo.fields)} fields")
            _set_sinfo(self, sinfo.fields[self.index])


class ShapeExpr(RelaxExpr):
    """A shape value: a tuple of int64 PrimExprs (ints allowed).

    >>> ShapeExpr([2, 3]).struct_info.ndim
    2
    """

    _fields = ("values",)

    def __init__(self, values, span=None):
        self.values = convert_shape_values(values, "ShapeExpr")
        self.span = span
        _set_sinfo(self, ShapeStructInfo(self.values))

    def __getitem__(self, index):
        return self.values[index]

    def __len__(self):
        return len(self.values)


TensorStructInfo._ShapeExpr = ShapeExpr  # a TensorStructInfo's shape given as a sequence


class PrimValue(RelaxExpr):
    """A scalar value (a TIR expression) used as a Relax value; ints become int64.

    >>> PrimValue(3).struct_info.dtype
    DataType('int64')
    """

    _fields = ("value",)

    def __init__(self, value, span=None):
        self.value = convert_prim_value(value, "PrimValue")
        self.span = span
        _set_sinfo(self, PrimStructInfo(value=self.value))


class StringImm(RelaxExpr):
    """A string value."""

    _fields = ("value",)

    def __init__(self, value, span=None):
        if not isinstance(value, str):
            raise TypeError(f"StringImm expects a str, got {type(value).__name__}")
        self.value = value
        self.span = span
        _set_sinfo(self, ObjectStructInfo())


class DataTypeImm(RelaxExpr):
    """A data type value (``DataTypeImm("float32")``)."""

    _fields = ("value",)

    def __init__(self, value, span=None):
        self.value = DataType(value)
        self.span = span
        _set_sinfo(self, ObjectStructInfo())


class ExternFunc(RelaxExpr):
    """A function looked up by name at run time (kernel or global registry); impure.

    >>> ExternFunc("env.relu").global_symbol
    'env.relu'
    """

    _fields = ("global_symbol",)

    def __init__(self, global_symbol, struct_info=None, span=None):
        if not isinstance(global_symbol, str):
            raise TypeError(f"ExternFunc expects a str name, got {type(global_symbol).__name__}")
        if struct_info is not None and not isinstance(struct_info, FuncStructInfo):
            raise TypeError(f"ExternFunc '{global_symbol}': struct_info must be a "
                            f"FuncStructInfo (R.Callable), got {type(struct_info).__name__}")
        self.global_symbol = global_symbol
        self.span = span
        # as TVM: a function known by name only is opaque and impure unless stated
        _set_sinfo(self, struct_info or FuncStructInfo.opaque_func(purity=False))


class Call(RelaxExpr):
    """A call of ``op`` (an Op, GlobalVar, ExternFunc or function-valued Var) on ``args``.

    ``attrs`` is a dict of operator attributes (or None); ``sinfo_args`` are
    struct infos that some operators take as arguments (call_tir's output).
    """

    _fields = ("op", "args", "attrs", "sinfo_args")

    def __init__(self, op, args, attrs=None, sinfo_args=(), span=None):
        self.op = _check_expr(op, "Call op")
        self.args = tuple(_check_expr(a, f"Call argument {i}") for i, a in enumerate(args))
        if attrs is not None and not isinstance(attrs, dict):
            raise TypeError(f"Call attrs must be a dict or None, got {type(attrs).__name__}")
        self.attrs = dict(attrs) if attrs else None
        sinfo_args = tuple(sinfo_args or ())
        for i, sinfo in enumerate(sinfo_args):
            if not isinstance(sinfo, StructInfo):
                raise TypeError(f"Call sinfo_args[{i}] must be a StructInfo, got "
                                f"{type(sinfo).__name__}")
        self.sinfo_args = sinfo_args
        self.span = span


class If(RelaxExpr):
    """``true_branch`` if ``cond`` (a boolean scalar) else ``false_branch``; branches are SeqExprs
    once normalized."""

    _fields = ("cond", "true_branch", "false_branch")

    def __init__(self, cond, true_branch, false_branch, span=None):
        self.cond = _check_expr(cond, "If condition")
        self.true_branch = _check_expr(true_branch, "If true branch")
        self.false_branch = _check_expr(false_branch, "If false branch")
        self.span = span
