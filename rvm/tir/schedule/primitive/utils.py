"""Helpers shared by the primitives: substitution that tracks rebuilt blocks, rebinding,
checking integer arguments, the constant zero."""
from rvm.ir.expr import PrimExpr
from rvm.tir import op as _op
from rvm.tir.arith import Analyzer
from rvm.tir.expr import IntImm, Range
from rvm.tir.stmt_functor import StmtExprMutator


class _TrackedSubstitute(StmtExprMutator):
    def __init__(self, lookup):
        self.lookup = lookup
        self.reuse = {}

    def visit_var_(self, op):
        new = self.lookup(op)
        return op if new is None else new

    def visit_block_(self, op):
        new = self._generic(op)
        if new is not op:
            self.reuse[op] = new
        return new


def substitute_tracked(stmt, value_map):
    """(``stmt`` with variables replaced by ``value_map`` ({Var: expr}), {old Block: new
    Block} for the blocks rebuilt on the way)."""
    by_id = {id(k): v for k, v in value_map.items()}
    mutator = _TrackedSubstitute(lambda v: by_id.get(id(v)))
    return mutator.visit(stmt), mutator.reuse


class _RealizeRewriter(StmtExprMutator):
    """Applies ``fn(realize) -> realize`` to the BlockRealizes directly under a statement."""

    def __init__(self, fn):
        self.fn = fn

    def visit_expr(self, expr):
        return expr

    def visit_block_realize_(self, op):
        return self.fn(op)


def rewrite_realizes(stmt, fn):
    """``stmt`` with ``fn`` applied to each BlockRealize not nested in another block."""
    return _RealizeRewriter(fn).visit(stmt)


def analyzer_with(loops):
    """An Analyzer knowing the ranges of For nodes."""
    ana = Analyzer()
    for loop in loops:
        ana.bind(loop.loop_var, Range.from_min_extent(loop.min, loop.extent))
    return ana


def is_one(expr):
    return isinstance(expr, IntImm) and expr.value == 1


def conjoin(a, b):
    """``a and b`` with constant ``True`` folded away."""
    a, b = _op.convert(a), _op.convert(b)
    if isinstance(a, IntImm) and a.value:
        return b
    if isinstance(b, IntImm) and b.value:
        return a
    return _op.logical_and(a, b)


def as_expr(value, dtype):
    return value if isinstance(value, PrimExpr) else _op.const(value, dtype)


def check_ints(primitive, *args):
    """ValueError naming every ``(name, value, minimum)`` of ``args`` unless each value is
    an int (not a bool) at least its minimum."""
    if any(isinstance(v, bool) or not isinstance(v, int) or v < low for _, v, low in args):
        wanted = ", ".join(f"{name} >= {low}" for name, _, low in args)
        got = ", ".join(f"{name}={v!r}" for name, v, _ in args)
        raise ValueError(f"{primitive} expects {wanted} (ints), got {got}")


def is_zero(expr):
    """True when ``expr`` is the integer constant 0 (a loop's or a region's minimum)."""
    return isinstance(expr, IntImm) and expr.value == 0
