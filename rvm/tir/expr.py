"""TIR expressions: variables, constants, arithmetic, comparisons, calls, buffer loads.

Constructors build exactly the node asked for, converting Python scalars with ``convert``;
the Python operators (``x + 1``, ``n * 2``, ``i // 4``, ``a < b``) are attached by
``rvm.tir.op``, which matches dtypes and folds constants, as TVM's operators do.
"""
import math

import numpy as np

from rvm.ir.expr import PrimExpr
from rvm.ir.node import Node
from rvm.ir.type import PointerType, PrimType, Type
from rvm.runtime.data_type import DataType


class PrimExprWithOp(PrimExpr):
    """TIR expression with Python operator overloading (the operators are rvm.tir.op's).

    ``==``/``!=`` build EQ/NE nodes; in a boolean context these mean identity
    (``same_as``), so TIR expressions work as dict keys and in ``in`` tests.
    """

    __hash__ = Node.__hash__

    def __bool__(self):
        raise ValueError(
            f"cannot use the symbolic expression {self!r} as a Python bool; expected a constant "
            "(use tir.Select / if_then_else for symbolic conditions)")


class Var(PrimExprWithOp):
    """A scalar variable (loop variable, symbolic shape, handle parameter).

    >>> n = Var("n", "int64")
    >>> str((n * 2).dtype)
    'int64'
    """

    _fields = ("dtype",)
    _is_var = True

    def __init__(self, name_hint="v", dtype="int32", span=None):
        self.name_hint = name_hint
        if isinstance(dtype, PrimType):
            dtype = dtype.dtype
        if isinstance(dtype, PointerType):  # a handle to typed memory, as TVM's
            self._type_annotation = dtype
            dtype = "handle"
        elif isinstance(dtype, Type):
            raise TypeError(f"Var {name_hint!r}: a TIR variable's type is a dtype, a PrimType "
                            f"or a PointerType, got {type(dtype).__name__}")
        self.dtype = DataType(dtype)
        self.span = span

    @property
    def name(self):
        return self.name_hint

    @property
    def type_annotation(self):
        """The variable's type: its PointerType when made from one, else ``PrimType(dtype)``."""
        annotation = getattr(self, "_type_annotation", None)
        return annotation if annotation is not None else PrimType(self.dtype)


class SizeVar(Var):
    """A variable known to be non-negative (a tensor dimension)."""


class IntImm(PrimExprWithOp):
    """An integer (or bool) constant of a given dtype."""

    _fields = ("dtype", "value")

    def __init__(self, dtype, value, span=None):
        self.dtype = DataType(dtype)
        if not (self.dtype.is_int or self.dtype.is_uint or self.dtype.is_bool):
            raise TypeError(f"IntImm expects an integer or bool dtype, got {self.dtype}")
        self.value = int(value)
        self.span = span

    def __bool__(self):
        return self.value != 0

    def __int__(self):
        return self.value

    def __index__(self):
        return self.value


class FloatImm(PrimExprWithOp):
    """A floating-point constant of a given dtype."""

    _fields = ("dtype", "value")

    def __init__(self, dtype, value, span=None):
        self.dtype = DataType(dtype)
        if not self.dtype.is_float:
            raise TypeError(f"FloatImm expects a float dtype, got {self.dtype}")
        self.value = float(value)
        self.span = span

    def __float__(self):
        return self.value


class StringImm(PrimExprWithOp):
    """A string constant (function names of call_packed/call_extern)."""

    _fields = ("value",)
    dtype = DataType("handle")

    def __init__(self, value, span=None):
        self.value = str(value)
        self.span = span


class Cast(PrimExprWithOp):
    """``value`` converted to ``dtype``."""

    _fields = ("dtype", "value")

    def __init__(self, dtype, value, span=None):
        self.dtype = DataType(dtype)
        self.value = convert(value)
        self.span = span


class BinaryOpExpr(PrimExprWithOp):
    """Base of two-operand expressions; the result dtype is the operands' dtype."""

    _fields = ("a", "b")

    def __init__(self, a, b, span=None):
        if not isinstance(a, PrimExpr) or not isinstance(b, PrimExpr):
            a, b = (convert(a, getattr(b, "dtype", None)),
                    convert(b, getattr(a, "dtype", None)))
        if a.dtype != b.dtype:
            raise TypeError(f"{type(self).__name__} expects operands of one dtype, "
                            f"got {a.dtype} and {b.dtype}")
        self.a = a
        self.b = b
        self.dtype = self._result_dtype(a)
        self.span = span

    @staticmethod
    def _result_dtype(a):
        return a.dtype


class Add(BinaryOpExpr):
    """a + b"""


class Sub(BinaryOpExpr):
    """a - b"""


class Mul(BinaryOpExpr):
    """a * b"""


class Div(BinaryOpExpr):
    """a / b (truncating on integers)"""


class Mod(BinaryOpExpr):
    """a % b with the sign of a (C semantics)"""


class FloorDiv(BinaryOpExpr):
    """floor(a / b)"""


class FloorMod(BinaryOpExpr):
    """a - floor(a / b) * b"""


class Min(BinaryOpExpr):
    """min(a, b)"""


class Max(BinaryOpExpr):
    """max(a, b)"""


class CmpExpr(BinaryOpExpr):
    """Base of comparisons; the result is bool (with the operands' lanes)."""

    @staticmethod
    def _result_dtype(a):
        return DataType("bool").with_lanes(a.dtype.lanes)


class EQ(CmpExpr):
    """a == b; as a Python bool it means identity of the operands."""

    def __bool__(self):
        return self.a.same_as(self.b)


class NE(CmpExpr):
    """a != b; as a Python bool it means the operands are different objects."""

    def __bool__(self):
        return not self.a.same_as(self.b)


class LT(CmpExpr):
    """a < b"""


class LE(CmpExpr):
    """a <= b"""


class GT(CmpExpr):
    """a > b"""


class GE(CmpExpr):
    """a >= b"""


class And(CmpExpr):
    """a && b on bools"""


class Or(CmpExpr):
    """a || b on bools"""


class Not(PrimExprWithOp):
    """!a on a bool"""

    _fields = ("a",)

    def __init__(self, a, span=None):
        self.a = convert(a)
        self.dtype = self.a.dtype
        self.span = span


class Select(PrimExprWithOp):
    """``true_value`` if ``condition`` else ``false_value`` (both sides may be evaluated)."""

    _fields = ("condition", "true_value", "false_value")

    def __init__(self, condition, true_value, false_value, span=None):
        condition = convert(condition)
        if not isinstance(true_value, PrimExpr) or not isinstance(false_value, PrimExpr):
            true_value, false_value = match_dtypes(true_value, false_value)
        if true_value.dtype != false_value.dtype:
            raise TypeError(f"Select expects branches of one dtype, got {true_value.dtype} "
                            f"and {false_value.dtype}")
        self.condition = condition
        self.true_value = true_value
        self.false_value = false_value
        self.dtype = true_value.dtype
        self.span = span


class Let(PrimExprWithOp):
    """``body`` with ``var`` bound to ``value``."""

    _fields = ("var", "value", "body")
    _binding_fields = ("var",)

    def __init__(self, var, value, body, span=None):
        if not isinstance(var, Var):
            raise TypeError(f"Let expects a Var to bind, got {type(var).__name__}")
        self.var = var
        self.value = convert(value, var.dtype)
        self.body = convert(body)
        self.dtype = self.body.dtype
        self.span = span


class Call(PrimExprWithOp):
    """A call of an intrinsic named ``op`` (``"tir.exp"``, ``"tir.call_packed"``, ...).

    Arguments are PrimExprs; call_packed/call_extern may also pass Buffers.
    """

    _fields = ("dtype", "op", "args")

    def __init__(self, dtype, op, args, span=None):
        self.dtype = DataType(dtype)
        self.op = str(op)
        self.args = tuple(a if isinstance(a, Node) else convert(a) for a in args)
        self.span = span


class Ramp(PrimExprWithOp):
    """The vector ``[base, base + stride, ..., base + (lanes - 1) * stride]``."""

    _fields = ("base", "stride", "lanes")

    def __init__(self, base, stride, lanes, span=None):
        if not isinstance(base, PrimExpr) or not isinstance(stride, PrimExpr):
            base, stride = match_dtypes(base, stride)  # Ramp(1, 2, 10): ints become int32
        if base.dtype != stride.dtype:
            raise TypeError(f"Ramp expects base and stride of one dtype, got {base.dtype} "
                            f"and {stride.dtype}")
        self.base = base
        self.stride = stride
        self.lanes = _lane_count(lanes, "Ramp")
        self.dtype = base.dtype.with_lanes(self.lanes)
        self.span = span


class Broadcast(PrimExprWithOp):
    """The vector with ``lanes`` copies of the scalar ``value``."""

    _fields = ("value", "lanes")

    def __init__(self, value, lanes, span=None):
        self.value = convert(value)
        self.lanes = _lane_count(lanes, "Broadcast")
        self.dtype = self.value.dtype.with_lanes(self.lanes)
        self.span = span


def _lane_count(lanes, who):
    """``lanes`` as a positive int: an int or an integer constant (TVM passes IntImm). rvm's
    vectors have a fixed width, so a lane count using ``vscale()`` is refused."""
    if isinstance(lanes, IntImm) and lanes.dtype.is_int:
        lanes = lanes.value
    if isinstance(lanes, bool) or not isinstance(lanes, (int, np.integer)):
        raise TypeError(f"{who}: lanes must be a constant int (rvm has no scalable vectors), "
                        f"got {lanes!r}")
    if lanes < 1:
        raise ValueError(f"{who}: lanes must be positive, got {lanes}")
    return int(lanes)


class BufferLoad(PrimExprWithOp):
    """``buffer[indices]``: reads one element."""

    _fields = ("buffer", "indices")

    def __init__(self, buffer, indices, span=None):
        if not hasattr(buffer, "shape") or not hasattr(buffer, "data"):
            raise TypeError(f"BufferLoad expects a Buffer, got {type(buffer).__name__}")
        self.buffer = buffer
        self.indices = tuple(convert(i) for i in indices)  # BufferLoad(buf, [1, 2]) as TVM
        if len(self.indices) != len(buffer.shape):
            raise ValueError(f"buffer {buffer.name!r} has {len(buffer.shape)} dimensions, "
                             f"got {len(self.indices)} indices")
        lanes = max([1] + [i.dtype.lanes for i in self.indices])
        self.dtype = buffer.dtype.with_lanes(lanes)
        self.span = span


class Reduce(PrimExprWithOp):
    """A commutative reduction of ``source`` over the reduction ``axis`` (TE only).

    ``combiner`` is one of "sum", "prod", "max", "min"; ``init`` is the
    identity, ``condition`` guards which points take part.
    """

    _fields = ("combiner", "source", "axis", "condition", "init")
    COMBINERS = ("sum", "prod", "max", "min")

    def __init__(self, combiner, source, axis, condition, init, span=None):
        if combiner not in self.COMBINERS:
            raise ValueError(f"unknown reduction {combiner!r}; expected one of {self.COMBINERS}")
        self.combiner = combiner
        self.source = source
        self.axis = tuple(axis)
        self.condition = condition
        self.init = init
        self.dtype = source.dtype
        self.span = span


class Range(Node):
    """The half-open interval ``[min, min + extent)``.

    ``Range(begin, end)`` takes bounds; ``Range.from_min_extent`` takes a start and a size.
    """

    _fields = ("min", "extent")

    def __init__(self, begin, end=None, span=None):
        if end is None:
            begin, end = 0, begin
        begin, end = match_dtypes(begin, end)
        self.min = begin
        self.extent = end - begin  # folded by rvm.tir.op
        self.span = span

    @classmethod
    def from_min_extent(cls, min_value, extent, span=None):
        """The range starting at ``min_value`` with ``extent`` elements."""
        node = cls.__new__(cls)
        node.min, node.extent = match_dtypes(min_value, extent)
        node.span = span
        return node

    def __repr__(self):
        return f"Range(min={self.min!r}, extent={self.extent!r})"


class IterVar(Node):
    """An iteration variable over ``dom``: a block axis or a TE axis.

    ``iter_type`` is DataPar (spatial, "S"), CommReduce (reduction, "R") or
    Ordered/Opaque.
    """

    DataPar = 0
    ThreadIndex = 1
    CommReduce = 2
    Ordered = 3
    Opaque = 4
    _fields = ("dom", "var", "iter_type", "thread_tag")
    _binding_fields = ("var",)

    def __init__(self, dom, var, iter_type, thread_tag="", span=None):
        if dom is not None and not isinstance(dom, Range):
            dom = Range(*dom) if isinstance(dom, (tuple, list)) else Range(dom)
        if isinstance(var, str):
            var = Var(var, dom.extent.dtype if dom is not None else "int32")
        self.dom = dom
        self.var = var
        self.iter_type = int(iter_type)
        self.thread_tag = thread_tag
        self.span = span

    def __repr__(self):
        return f"IterVar({self.var.name_hint}, {self.dom!r}, type={self.iter_type})"


def _forward_to_var(name):
    def method(self, *args):
        return getattr(self.var, name)(*args)

    method.__name__ = name
    return method


# An IterVar stands for its variable in arithmetic (``k * 2``, ``A[k + 1]``), as in TVM.
for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__neg__", "__lt__",
              "__le__", "__gt__", "__ge__"):
    setattr(IterVar, _name, _forward_to_var(_name))


_INT32_RANGE = (-(2 ** 31), 2 ** 31 - 1)


def const(value, dtype=None):
    """A constant: IntImm for ints and bools, FloatImm for floats.

    Without ``dtype``: bool -> "bool", int -> "int32" (int64 when it does not
    fit), float -> "float32".

    >>> [str(c.dtype) for c in (const(3), const(3, "int64"), const(1.5))]
    ['int32', 'int64', 'float32']
    """
    if isinstance(value, np.generic):
        dtype = dtype or DataType(value.dtype)
        value = value.item()
    if dtype is None:
        if isinstance(value, bool):
            dtype = "bool"
        elif isinstance(value, int):
            dtype = "int32" if _INT32_RANGE[0] <= value <= _INT32_RANGE[1] else "int64"
        elif isinstance(value, float):
            dtype = "float32"
        else:
            raise TypeError(f"const expects a bool, int or float, got {type(value).__name__}")
    dtype = DataType(dtype)
    if dtype.is_float:
        return FloatImm(dtype, value)
    if isinstance(value, float) and not value.is_integer():
        raise ValueError(f"const: {value} is not representable as {dtype}")
    return IntImm(dtype, value)


def convert(value, dtype=None):
    """``value`` as a PrimExpr: expressions pass through, scalars become constants of ``dtype``.

    A Python int meeting a float ``dtype`` becomes a float constant.
    """
    if isinstance(value, PrimExpr):
        return value
    if isinstance(value, IterVar):
        return value.var
    if isinstance(value, str):
        return StringImm(value)
    if isinstance(value, (bool, int, float, np.generic)):
        if dtype is not None:
            dtype = DataType(dtype)
            if isinstance(value, float) and not dtype.is_float:
                dtype = None  # a float never silently becomes an int
            elif isinstance(value, bool) and not dtype.is_bool:
                dtype = None
        return const(value, dtype)
    if hasattr(value, "asobject"):  # te.Tensor slices and other expression wrappers
        return value.asobject()
    raise TypeError(f"cannot convert {type(value).__name__} {value!r} to a TIR expression; "
                    "expected a PrimExpr, int, float or bool")


def is_convertible(value):
    """Whether ``convert`` accepts ``value`` (expressions, IterVars, numbers, strings)."""
    return isinstance(value, (PrimExpr, IterVar, bool, int, float, str, np.generic))


def _promote(a, b):
    """The common dtype of two expressions (int < float, narrower < wider)."""
    da, db = a.dtype, b.dtype
    if da == db:
        return da
    if da.lanes != db.lanes:
        raise TypeError(f"cannot combine vector types {da} and {db}")
    if da.is_float != db.is_float:
        return da if da.is_float else db
    if da.is_bool != db.is_bool:
        return db if da.is_bool else da
    return da if da.bits >= db.bits else db


def match_dtypes(a, b):
    """Both operands as PrimExprs of one dtype."""
    if not isinstance(a, PrimExpr) and isinstance(b, PrimExpr):
        a = convert(a, b.dtype)
    elif not isinstance(b, PrimExpr) and isinstance(a, PrimExpr):
        b = convert(b, a.dtype)
    else:
        a, b = convert(a), convert(b)
    dtype = _promote(a, b)
    return cast(a, dtype), cast(b, dtype)


def const_value(x):
    """The Python value of a constant, else None."""
    if isinstance(x, (IntImm, FloatImm)):
        return x.value
    return None


def cast(x, dtype):
    """``x`` converted to ``dtype`` (constants fold; casting to its own dtype is a no-op)."""
    dtype = DataType(dtype)
    x = convert(x, dtype)
    if x.dtype == dtype:
        return x
    value = const_value(x)
    if value is not None and dtype.lanes == 1:
        if dtype.is_float:
            return FloatImm(dtype, value)
        if dtype.is_bool:
            return IntImm(dtype, bool(value))
        return IntImm(dtype, math.trunc(value))
    return Cast(dtype, x)
