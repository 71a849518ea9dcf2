"""Dataflow patterns: what an expression must look like to be matched (TVM's ``relax.dpl``).

A pattern is built from leaves and combinators::

    add = is_op("relax.add")(wildcard(), wildcard())
    chain = is_op("relax.multiply")(is_op("relax.subtract")(add, wildcard()), wildcard())
    either = is_op("relax.add") | is_op("relax.subtract")   # alternatives
    pat = (add | is_op("relax.subtract")(wildcard(), wildcard())).has_dtype("float32")

Calling a pattern makes a call pattern whose callee it matches (sequencing:
the argument patterns match the operands, looked up through the bindings
that define variables). ``match(pattern, expr, var2val)`` gives the
{pattern: matched expression} map, or None.

>>> from rvm.relax.expr import Var, Call
>>> from rvm.relax.op.registry import Op
>>> from rvm.relax.struct_info import TensorStructInfo
>>> x = Var("x", TensorStructInfo((2,), "float32"))
>>> call = Call(Op.get("relax.add"), [x, x])
>>> is_op("relax.add")(wildcard(), wildcard()).match(call)
True
>>> is_op("relax.subtract")(wildcard(), wildcard()).match(call)
False
"""
from rvm.relax.expr import (
    Call, Constant, ExternFunc, Tuple, TupleGetItem, Var,
)
from rvm.relax.op.registry import Op
from rvm.relax.struct_info import TensorStructInfo
from rvm.runtime.data_type import DataType

__all__ = [
    "AndPattern", "CallPattern", "ConstantPattern", "DFPattern", "ExprPattern",
    "ExternFuncPattern", "OrPattern", "TuplePattern", "TupleGetItemPattern", "TypePattern",
    "WildcardPattern", "is_const", "is_op", "is_tuple", "is_tuple_get_item", "wildcard",
    "match", "extract_matched_expr",
]


class DFPattern:
    """Base class of dataflow patterns."""

    def __call__(self, *args, varg_default_wildcard=False):
        """A call pattern with this pattern as the callee and ``args`` as the operands."""
        return CallPattern(self, args, varg_default_wildcard)

    def __or__(self, other):
        return OrPattern(self, other)

    def __and__(self, other):
        return AndPattern(self, other)

    def has_dtype(self, dtype):
        """This pattern, restricted to tensors of ``dtype``."""
        return TypePattern(self, dtype=str(DataType(dtype)))

    def has_shape(self, shape):
        """This pattern, restricted to tensors of the static ``shape``."""
        return TypePattern(self, shape=tuple(int(d) for d in shape))

    def match(self, expr, var2val=None):
        """Whether ``expr`` matches (variables looked up in ``var2val``)."""
        return match(self, expr, var2val) is not None

    def _match(self, expr, matcher):
        raise NotImplementedError(type(self).__name__)


class WildcardPattern(DFPattern):
    """Matches any expression."""

    def _match(self, expr, matcher):
        return True

    def __repr__(self):
        return "*"


class ExprPattern(DFPattern):
    """Matches one given expression (the same object, or an Op of the same name)."""

    def __init__(self, expr):
        self.expr = expr

    def _match(self, expr, matcher):
        if isinstance(self.expr, Op):
            return isinstance(expr, Op) and expr.name == self.expr.name
        return expr is self.expr

    def __repr__(self):
        return getattr(self.expr, "name", None) or repr(self.expr)


class ExternFuncPattern(DFPattern):
    """Matches ``ExternFunc(global_symbol)``."""

    def __init__(self, global_symbol):
        self.global_symbol = global_symbol

    def _match(self, expr, matcher):
        return isinstance(expr, ExternFunc) and expr.global_symbol == self.global_symbol


class ConstantPattern(DFPattern):
    """Matches a constant tensor."""

    def _match(self, expr, matcher):
        return isinstance(expr, Constant)

    def __repr__(self):
        return "const"


class CallPattern(DFPattern):
    """Matches a call whose callee matches ``op`` and whose operands match ``args``
    (``varg_default_wildcard``: extra operands beyond ``args`` are allowed)."""

    def __init__(self, op, args, varg_default_wildcard=False):
        self.op = _as_pattern(op)
        self.args = None if args is None else tuple(_as_pattern(a) for a in args)
        self.varg_default_wildcard = varg_default_wildcard

    def _match(self, expr, matcher):
        if not isinstance(expr, Call) or not matcher.visit(self.op, expr.op):
            return False
        if self.args is None:
            return True
        if len(expr.args) < len(self.args) or (
                len(expr.args) > len(self.args) and not self.varg_default_wildcard):
            return False
        return all(matcher.visit(p, a) for p, a in zip(self.args, expr.args))

    def __repr__(self):
        return f"{self.op!r}({', '.join(map(repr, self.args or ()))})"


class TuplePattern(DFPattern):
    """Matches a tuple whose fields match ``fields``."""

    def __init__(self, fields):
        self.fields = tuple(_as_pattern(f) for f in fields)

    def _match(self, expr, matcher):
        return (isinstance(expr, Tuple) and len(expr.fields) == len(self.fields)
                and all(matcher.visit(p, f) for p, f in zip(self.fields, expr.fields)))


class TupleGetItemPattern(DFPattern):
    """Matches ``tuple[index]`` (any index when ``index`` is None)."""

    def __init__(self, tuple_value, index=None):
        self.tuple = _as_pattern(tuple_value)
        self.index = index

    def _match(self, expr, matcher):
        return (isinstance(expr, TupleGetItem)
                and (self.index is None or expr.index == self.index)
                and matcher.visit(self.tuple, expr.tuple_value))


class OrPattern(DFPattern):
    """Matches what ``left`` or ``right`` matches (``left`` tried first)."""

    def __init__(self, left, right):
        self.left = _as_pattern(left)
        self.right = _as_pattern(right)

    def _match(self, expr, matcher):
        saved = dict(matcher.memo)
        if matcher.visit(self.left, expr):
            return True
        matcher.memo = saved
        return matcher.visit(self.right, expr)

    def __repr__(self):
        return f"({self.left!r} | {self.right!r})"


class AndPattern(DFPattern):
    """Matches what both ``left`` and ``right`` match."""

    def __init__(self, left, right):
        self.left = _as_pattern(left)
        self.right = _as_pattern(right)

    def _match(self, expr, matcher):
        return matcher.visit(self.left, expr) and matcher.visit(self.right, expr)


class TypePattern(DFPattern):
    """Matches what ``pattern`` matches when the tensor's dtype / static shape agree."""

    def __init__(self, pattern, dtype=None, shape=None):
        self.pattern = _as_pattern(pattern)
        self.dtype = dtype
        self.shape = shape

    def _match(self, expr, matcher):
        sinfo = expr.struct_info_
        if not isinstance(sinfo, TensorStructInfo):
            return False
        if self.dtype is not None and str(sinfo.dtype) != self.dtype:
            return False
        if self.shape is not None:
            dims = _static_dims(sinfo)
            if dims is None or tuple(dims) != self.shape:
                return False
        return matcher.visit(self.pattern, expr)


def _static_dims(sinfo):
    shape = getattr(sinfo, "shape", None)
    values = getattr(shape, "values", None)
    if values is None:
        return None
    dims = []
    for dim in values:
        value = getattr(dim, "value", None)
        if not isinstance(value, int):
            return None
        dims.append(value)
    return dims


def _as_pattern(value):
    if isinstance(value, DFPattern):
        return value
    if isinstance(value, str):
        return is_op(value)
    from rvm.ir.expr import RelaxExpr

    if isinstance(value, (Op, RelaxExpr)):
        return ExprPattern(value)
    raise TypeError(f"expected a DFPattern, an operator name or a Relax expression, got "
                    f"{type(value).__name__}")


class _Matcher:
    """One matching attempt; ``memo`` maps each pattern (by id) to what it matched."""

    def __init__(self, var2val):
        self.var2val = var2val or {}
        self.memo = {}

    def visit(self, pattern, expr):
        key = id(pattern)
        if key in self.memo:  # a pattern used twice must match the same expression
            return self.memo[key][1] is expr or self._resolve(self.memo[key][1]) is \
                self._resolve(expr)
        if self._try(pattern, expr):
            return True
        value = self._resolve_once(expr)
        return value is not expr and self.visit(pattern, value)

    def _try(self, pattern, expr):
        saved = dict(self.memo)
        if pattern._match(expr, self):
            self.memo[id(pattern)] = (pattern, expr)
            return True
        self.memo = saved
        return False

    def _resolve_once(self, expr):
        if isinstance(expr, Var) and id(expr) in self.var2val:
            return self.var2val[id(expr)]
        return expr

    def _resolve(self, expr):
        seen = 0
        while isinstance(expr, Var) and id(expr) in self.var2val and seen < 1000:
            expr = self.var2val[id(expr)]
            seen += 1
        return expr


def _var2val_by_id(var2val):
    if not var2val:
        return {}
    return {(k if isinstance(k, int) else id(k)): v for k, v in var2val.items()}


def match(pattern, expr, var2val=None):
    """{pattern: matched expression} for every sub-pattern, or None if ``expr`` does not match.

    ``var2val`` maps variables to their bound values (e.g. from
    ``rvm.relax.analysis.get_var2val``), so a pattern sees through them.
    """
    return match_by_id(pattern, expr, _var2val_by_id(var2val))


def match_by_id(pattern, expr, var2val_by_id):
    """``match`` with the bindings given as {id(variable): value} (no conversion per call)."""
    matcher = _Matcher(var2val_by_id)
    if not matcher.visit(_as_pattern(pattern), expr):
        return None
    return {pat: found for pat, found in matcher.memo.values()}


def extract_matched_expr(pattern, expr, var2val=None):
    """TVM's name for ``match``: {pattern: matched expression}, or None."""
    return match(pattern, expr, var2val)


def wildcard():
    """A pattern matching anything."""
    return WildcardPattern()


def is_op(op_name):
    """A pattern matching the operator ``op_name`` (e.g. ``"relax.add"``); call it with
    argument patterns to match a call of it."""
    if not isinstance(op_name, str):
        raise TypeError(f"is_op expects an operator name, got {type(op_name).__name__}")
    return ExprPattern(Op.get(op_name))


def is_const():
    """A pattern matching a constant tensor."""
    return ConstantPattern()


def is_tuple(fields):
    """A pattern matching a tuple whose fields match ``fields``."""
    return TuplePattern(fields)


def is_tuple_get_item(tuple_value, index=None):
    """A pattern matching ``tuple_value[index]``."""
    return TupleGetItemPattern(tuple_value, index)
