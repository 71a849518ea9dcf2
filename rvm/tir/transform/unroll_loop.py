"""UnrollLoop: loops under a ``pragma_auto_unroll_max_step`` annotation are unrolled when
their whole body runs at most that many steps (as TVM's UnrollLoop with auto_max_step).

The tuner annotates the outer loops of a kernel with a sampled step budget; this
pass turns the small inner loops into ``unroll`` loops (``#pragma GCC unroll`` in
C), innermost first. A step is one statement run; a vectorized loop's body counts
once (it runs as vector instructions).

    for i in T.serial(4, annotations={"pragma_auto_unroll_max_step": 16}):
        for j in range(4):             ->        for j in T.unroll(4):
            B[i, j] = A[i, j]                        B[i, j] = A[i, j]
"""
from rvm.tir.expr import IntImm
from rvm.tir.stmt import ForKind, SeqStmt
from rvm.tir.stmt_functor import StmtMutator
from rvm.tir.transform.prim_func_pass import prim_func_pass

MAX_STEP = "pragma_auto_unroll_max_step"


class _Unroller(StmtMutator):
    def __init__(self):
        self.budget = [0]
        self.steps = 0

    def visit_for_(self, op):
        budget = op.annotations.get(MAX_STEP)
        if budget is not None:
            self.budget.append(int(budget))
        outer_steps, self.steps = self.steps, 0
        try:
            op = self._generic(op)
        finally:
            if budget is not None:
                self.budget.pop()
        inner = max(self.steps, 1)
        extent = op.extent.value if isinstance(op.extent, IntImm) else None
        if op.kind == ForKind.VECTORIZED:
            total = inner
        else:
            total = inner * extent if extent is not None else None
        if (op.kind == ForKind.SERIAL and extent is not None and total is not None and
                1 < extent and total <= self.budget[-1] and MAX_STEP not in op.annotations):
            op = op.with_fields(kind=ForKind.UNROLLED)
        self.steps = outer_steps + (total if total is not None else 1 << 30)
        return op

    def visit_seq_stmt_(self, op):
        outer, total = self.steps, 0
        items = []
        for s in op.seq:
            self.steps = 0
            items.append(self.visit_stmt(s))
            total += max(self.steps, 1)
        self.steps = outer + total
        if all(a is b for a, b in zip(items, op.seq)):
            return op
        return SeqStmt(items)

    def visit_buffer_store_(self, op):
        self.steps += 1
        return op


def unroll_loop(func):
    """``func`` with the loops fitting their annotated step budget unrolled."""
    body = _Unroller().visit(func.body)
    return func if body is func.body else func.with_body(body)


def UnrollLoop():  # noqa: N802  (passes are CamelCase factories)
    """The pass form of ``unroll_loop``."""
    return prim_func_pass(lambda f, mod, ctx: unroll_loop(f), "UnrollLoop")
