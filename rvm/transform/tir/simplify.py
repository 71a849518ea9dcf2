"""Simplify: arithmetic simplification of every expression of a PrimFunc.

Uses rvm.tir.arith, which knows loop ranges while it walks the body, so
index expressions left by flattening fold (``(i * 4 + j) // 4 -> i`` when
``0 <= j < 4``) and branches with provable conditions disappear.

    for j in range(4):                          for j in range(4):
        B[i * 4 + j + 0] = A[(i * 4 + j) // 4]    ->  B[i * 4 + j] = A[i]
"""
from rvm.tir.arith import Analyzer
from rvm.ir.structural import structural_equal
from rvm.tir.expr import BufferLoad, Call, IntImm, Range
from rvm.tir.op import const, max_value
from rvm.tir.stmt import Evaluate, IfThenElse, SeqStmt, stmt_seq
from rvm.tir.stmt_functor import StmtExprMutator, StmtMutator
from rvm.transform.tir.prim_func_pass import prim_func_pass


class _HideLoads(StmtExprMutator):
    """Turns each load into a call the simplifier cannot confuse with another load.

    The simplifier merges terms it finds structurally equal, and structural
    equality matches buffers up to renaming (``A[i] + B[i]`` would become
    ``A[i] * 2``). A call named after the load's position keeps loads apart,
    while its arguments (the indices) are still simplified.
    """

    def __init__(self):
        self.buffers = []

    def visit_buffer_load_(self, op):
        indices = [self.visit_expr(i) for i in op.indices]
        self.buffers.append(op.buffer)
        return Call(op.dtype, f"{_LOAD_PREFIX}{len(self.buffers) - 1}", indices)


class _ShowLoads(StmtExprMutator):
    def __init__(self, buffers):
        self.buffers = buffers

    def visit_call_(self, op):
        op = self._generic(op)
        if op.op.startswith(_LOAD_PREFIX):
            return BufferLoad(self.buffers[int(op.op[len(_LOAD_PREFIX):])], op.args)
        return op


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


_LOAD_PREFIX = "rvm.simplify.load."


def _is_nop(stmt):
    return isinstance(stmt, Evaluate) and isinstance(stmt.value, IntImm)


def simplify_prim_func(func):
    """``func`` with its expressions simplified and constant branches resolved."""
    analyzer = Analyzer()
    for param in func.params:
        buffer = func.buffer_map.get(param)
        if buffer is not None:
            for dim in buffer.shape:
                if hasattr(dim, "name_hint"):
                    analyzer.bind(dim, _non_negative(dim))
    hide = _HideLoads()
    body = analyzer.simplify(hide.visit(func.body))
    body = _DeadBranchRemover().visit(_ShowLoads(hide.buffers).visit(body))
    if structural_equal(body, func.body, map_free_vars=False):
        return func
    return func.with_body(body)


def _non_negative(dim):
    return Range(const(0, dim.dtype), max_value(dim.dtype))


def Simplify():  # noqa: N802  (passes are CamelCase factories)
    """The pass form of ``simplify_prim_func``."""
    return prim_func_pass(lambda f, mod, ctx: simplify_prim_func(f), "Simplify")
