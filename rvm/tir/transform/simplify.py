"""Simplify: arithmetic simplification of every expression of a PrimFunc.

Uses rvm.tir.arith, which knows loop ranges while it walks the body, so
index expressions left by flattening fold (``(i * 4 + j) // 4 -> i`` when
``0 <= j < 4``), branches with provable conditions disappear and loops of one
iteration are replaced by their body.

    for j in range(4):                          for j in range(4):
        B[i * 4 + j + 0] = A[(i * 4 + j) // 4]    ->  B[i * 4 + j] = A[i]
"""
from rvm.ir.base import structural_equal
from rvm.tir.arith import Analyzer
from rvm.tir.expr import IntImm, Range
from rvm.tir.free_vars import free_vars
from rvm.tir.op import const, max_value
from rvm.tir.stmt import Evaluate, SeqStmt, stmt_seq
from rvm.tir.stmt_functor import StmtExprMutator, StmtMutator
from rvm.tir.transform.prim_func_pass import prim_func_pass


class _UnitLoopRemover(StmtExprMutator):
    """Replaces loops of one iteration by their body at the loop's start: in one walk, the
    variables of the unit loops around a statement replaced as it is met (nested unit
    loops are not substituted into one another's bodies again and again)."""

    def __init__(self):
        self.values = {}  # id(loop variable of an enclosing unit loop) -> its start

    def visit_expr(self, expr):
        return super().visit_expr(expr) if self.values else expr

    def visit_var_(self, op):
        return self.values.get(id(op), op)

    def visit_for_(self, op):
        if not (isinstance(op.extent, IntImm) and op.extent.value == 1):
            return self._generic(op)
        key = id(op.loop_var)
        saved = self.values.get(key)
        self.values[key] = self.visit_expr(op.min)
        try:
            return self.visit_stmt(op.body)
        finally:
            if saved is None:
                del self.values[key]
            else:
                self.values[key] = saved


class _DeadBranchRemover(StmtMutator):
    """Drops branches whose condition folded to a constant, and no-op statements."""

    def visit_if_then_else_(self, op):
        op = self._generic(op)
        if isinstance(op.condition, IntImm):
            taken = op.then_case if op.condition.value else op.else_case
            return taken if taken is not None else Evaluate(IntImm("int32", 0))
        return op

    def visit_seq_stmt_(self, op):
        op = self._generic(op)
        if not isinstance(op, SeqStmt):
            return op
        kept = [s for s in op.seq if not _is_nop(s)]
        if len(kept) == len(op.seq):
            return op
        return stmt_seq(*kept) if kept else Evaluate(IntImm("int32", 0))


def _is_nop(stmt):
    return isinstance(stmt, Evaluate) and isinstance(stmt.value, IntImm)


def simplify_prim_func(func):
    """``func`` with its expressions simplified and constant branches resolved."""
    analyzer = Analyzer()
    for param in func.params:
        buffer = func.buffer_map.get(param)
        if buffer is not None:
            for dim in buffer.shape:
                # a dimension's variables are sizes: ``s70`` of a dimension ``s70 * s72`` too
                for var in free_vars(dim):
                    analyzer.bind(var, _non_negative(var))
    body = _UnitLoopRemover().visit(func.body)
    body = _DeadBranchRemover().visit(analyzer.simplify(body))
    if structural_equal(body, func.body, map_free_vars=False):
        return func
    return func.with_body(body)


def _non_negative(dim):
    return Range(const(0, dim.dtype), max_value(dim.dtype))


def Simplify():  # noqa: N802  (passes are CamelCase factories)
    """The pass form of ``simplify_prim_func``."""
    return prim_func_pass(lambda f, mod, ctx: simplify_prim_func(f), "Simplify")
