"""TIR expressions: variables, constants, arithmetic, comparisons, calls, buffer loads.

Constructors build exactly the node asked for; the Python operators
(``x + 1``, ``n * 2``, ``i // 4``, ``a < b``) go through ``rvm.tir.op``,
which converts Python scalars, matches dtypes and folds constants, as TVM's
operators do.
"""
from rvm.ir.expr import PrimExpr
from rvm.ir.node import Node
from rvm.runtime.data_type import DataType


class PrimExprWithOp(PrimExpr):
    """TIR expression with Python operator overloading.

    ``==``/``!=`` build EQ/NE nodes; in a boolean context these mean identity
    (``same_as``), so TIR expressions work as dict keys and in ``in`` tests.
    """

    __hash__ = Node.__hash__

    def __add__(self, other):
        return _op.add(self, other)

    def __radd__(self, other):
        return _op.add(other, self)

    def __sub__(self, other):
        return _op.subtract(self, other)

    def __rsub__(self, other):
        return _op.subtract(other, self)

    def __mul__(self, other):
        return _op.multiply(self, other)

    def __rmul__(self, other):
        return _op.multiply(other, self)

    def __truediv__(self, other):
        return _op.div(self, other)

    def __rtruediv__(self, other):
        return _op.div(other, self)

    def __floordiv__(self, other):
        return _op.floordiv(self, other)

    def __rfloordiv__(self, other):
        return _op.floordiv(other, self)

    def __mod__(self, other):
        return _op.floormod(self, other)

    def __rmod__(self, other):
        return _op.floormod(other, self)

    def __pow__(self, other):
        return _op.power(self, other)

    def __neg__(self):
        return _op.negate(self)

    def __abs__(self):
        return _op.abs(self)

    def __lt__(self, other):
        return _op.less(self, other)

    def __le__(self, other):
        return _op.less_equal(self, other)

    def __gt__(self, other):
        return _op.greater(self, other)

    def __ge__(self, other):
        return _op.greater_equal(self, other)

    def __eq__(self, other):
        if not _op.is_convertible(other):
            return NotImplemented  # e.g. ``x == None``: Python falls back to identity
        return _op.equal(self, other)

    def __ne__(self, other):
        if not _op.is_convertible(other):
            return NotImplemented
        return _op.not_equal(self, other)

    def __and__(self, other):
        return _op.logical_and(self, other)

    def __rand__(self, other):
        return _op.logical_and(other, self)

    def __or__(self, other):
        return _op.logical_or(self, other)

    def __ror__(self, other):
        return _op.logical_or(other, self)

    def __invert__(self):
        return _op.logical_not(self)

    def __bool__(self):
        raise ValueError(
            f"cannot use the symbolic expression {self!r} as a Python bool; expected a constant "
            "(use tir.Select / if_then_else for symbolic conditions)")

    def astype(self, dtype):
        """This expression cast to ``dtype``."""
        return _op.cast(self, dtype)

    def __repr__(self):
        return _op.expr_text(self)


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
        self.dtype = DataType(dtype)
        self.span = span

    @property
    def name(self):
        return self.name_hint


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
        self.value = _op.convert(value)
        self.span = span


class BinaryOpExpr(PrimExprWithOp):
    """Base of two-operand expressions; the result dtype is the operands' dtype."""

    _fields = ("a", "b")

    def __init__(self, a, b, span=None):
        if not isinstance(a, PrimExpr) or not isinstance(b, PrimExpr):
            a, b = (_op.convert(a, getattr(b, "dtype", None)),
                    _op.convert(b, getattr(a, "dtype", None)))
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
        self.a = _op.convert(a)
        self.dtype = self.a.dtype
        self.span = span


class Select(PrimExprWithOp):
    """``true_value`` if ``condition`` else ``false_value`` (both sides may be evaluated)."""

    _fields = ("condition", "true_value", "false_value")

    def __init__(self, condition, true_value, false_value, span=None):
        condition = _op.convert(condition)
        if not isinstance(true_value, PrimExpr) or not isinstance(false_value, PrimExpr):
            true_value, false_value = _op._match(true_value, false_value)
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
        self.var = var
        self.value = _op.convert(value, var.dtype)
        self.body = body
        self.dtype = body.dtype
        self.span = span


class Call(PrimExprWithOp):
    """A call of an intrinsic named ``op`` (``"tir.exp"``, ``"tir.call_packed"``, ...).

    Arguments are PrimExprs; call_packed/call_extern may also pass Buffers.
    """

    _fields = ("dtype", "op", "args")

    def __init__(self, dtype, op, args, span=None):
        self.dtype = DataType(dtype)
        self.op = str(op)
        self.args = tuple(a if isinstance(a, Node) else _op.convert(a) for a in args)
        self.span = span


class Ramp(PrimExprWithOp):
    """The vector ``[base, base + stride, ..., base + (lanes - 1) * stride]``."""

    _fields = ("base", "stride", "lanes")

    def __init__(self, base, stride, lanes, span=None):
        self.base = base
        self.stride = stride
        self.lanes = int(lanes)
        self.dtype = base.dtype.with_lanes(self.lanes)
        self.span = span


class Broadcast(PrimExprWithOp):
    """The vector with ``lanes`` copies of the scalar ``value``."""

    _fields = ("value", "lanes")

    def __init__(self, value, lanes, span=None):
        self.value = value
        self.lanes = int(lanes)
        self.dtype = value.dtype.with_lanes(self.lanes)
        self.span = span


class BufferLoad(PrimExprWithOp):
    """``buffer[indices]``: reads one element."""

    _fields = ("buffer", "indices")

    def __init__(self, buffer, indices, span=None):
        self.buffer = buffer
        self.indices = tuple(indices)
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
        begin, end = _op._match(begin, end)
        self.min = begin
        self.extent = _op.subtract(end, begin)
        self.span = span

    @classmethod
    def from_min_extent(cls, min_value, extent, span=None):
        """The range starting at ``min_value`` with ``extent`` elements."""
        node = cls.__new__(cls)
        node.min, node.extent = _op._match(min_value, extent)
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


from rvm.tir import op as _op  # noqa: E402  (op builds the nodes above)
