"""LowerOpaqueBlock: blocks become plain statements over loop variables.

Each ``BlockRealize`` is replaced by its block's body with the block axes
substituted by their bound values, guarded by the realize predicate; buffers
the block allocates become ``Allocate`` + ``DeclBuffer`` around that body.
Inits must already be lowered (LowerInitBlock).

    for i in range(4):                            for i in range(4):
        with T.block("B"):                ->          B[i] = A[i] + 1.0
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi] + 1.0
"""
from rvm.tir import op as _op
from rvm.tir.expr import IntImm
from rvm.tir.stmt import Allocate, DeclBuffer, IfThenElse
from rvm.tir.stmt_functor import StmtMutator, substitute
from rvm.transform.tir.prim_func_pass import prim_func_pass


def _is_true(expr):
    return isinstance(expr, IntImm) and expr.value != 0


class _BlockLowerer(StmtMutator):
    def visit_block_realize_(self, op):
        block = op.block
        if block.init is not None:
            raise ValueError(f"block {block.name_hint!r} still has an init; run LowerInitBlock "
                             "before LowerOpaqueBlock")
        if block.match_buffers:
            names = ", ".join(m.buffer.name for m in block.match_buffers)
            raise ValueError(f"block {block.name_hint!r}: match_buffer ({names}) inside blocks "
                             "is not supported by the lowering; expected none")
        body = self.visit_stmt(block.body)
        mapping = {iv.var: value if value.dtype == iv.var.dtype else _op.cast(value, iv.var.dtype)
                   for iv, value in zip(block.iter_vars, op.iter_values)}
        if mapping:
            body = substitute(body, mapping)
        for buffer in reversed(block.alloc_buffers):
            body = Allocate(buffer.data, buffer.dtype, buffer.shape, True,
                            DeclBuffer(buffer, body), annotations={"scope": buffer.scope})
        predicate = substitute(op.predicate, mapping) if mapping else op.predicate
        if not _is_true(predicate):
            body = IfThenElse(predicate, body)
        return body


def lower_opaque_block(func):
    """``func`` with every block lowered to loops and statements."""
    body = _BlockLowerer().visit(func.body)
    return func if body is func.body else func.with_body(body)


def LowerOpaqueBlock():  # noqa: N802  (passes are CamelCase factories)
    """The pass form of ``lower_opaque_block``."""
    return prim_func_pass(lambda f, mod, ctx: lower_opaque_block(f), "LowerOpaqueBlock")
