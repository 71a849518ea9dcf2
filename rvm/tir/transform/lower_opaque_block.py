"""LowerOpaqueBlock: blocks become plain statements over loop variables.

Each ``BlockRealize`` is replaced by its block's body with the block axes
substituted by their bound values, guarded by the realize predicate; buffers
the block allocates become ``Allocate`` + ``DeclBuffer`` around that body.
Inits must already be lowered (LowerInitBlock). A block's
``T.match_buffer`` of a region (TVM's LowerMatchBuffer) disappears: accesses
``A0[i, j]`` of the matched buffer become accesses of the source buffer at the
region's offsets, ``A[r0.min + i, r1.min + j]``.

    for i in range(4):                            for i in range(4):
        with T.block("B"):                ->          B[i] = A[i] + 1.0
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi] + 1.0
"""
from rvm.tir import op as _op
from rvm.tir.expr import BufferLoad, IntImm
from rvm.tir.stmt import Allocate, BufferStore, DeclBuffer, IfThenElse
from rvm.tir.stmt_functor import StmtExprMutator, StmtMutator, substitute
from rvm.tir.transform.prim_func_pass import prim_func_pass


def _is_true(expr):
    return isinstance(expr, IntImm) and expr.value != 0


class _BlockLowerer(StmtMutator):
    def visit_block_realize_(self, op):
        block = op.block
        if block.init is not None:
            raise ValueError(f"block {block.name_hint!r} still has an init; run LowerInitBlock "
                             "before LowerOpaqueBlock")
        body = block.body
        if block.match_buffers:
            body = _MatchedAccesses(block).visit_stmt(body)
        body = self.visit_stmt(body)
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


class _MatchedAccesses(StmtExprMutator):
    """Rewrites the accesses of a block's matched buffers into their source buffers."""

    def __init__(self, block):
        self.sources = {}
        for match in block.match_buffers:
            buffer, source = match.buffer, match.source
            ranges = list(source.region)
            # the matched buffer's dimensions are the region's last ones (leading unit
            # dimensions of the region may be dropped, as in TVM)
            dropped = len(ranges) - len(buffer.shape)
            if dropped < 0 or any(not _is_one(r.extent) for r in ranges[:dropped]):
                raise ValueError(f"block {block.name_hint!r}: match_buffer {buffer.name} of "
                                 f"rank {len(buffer.shape)} cannot view a region of rank "
                                 f"{len(ranges)}")
            self.sources[buffer] = (source.buffer, ranges, dropped)

    def _indices(self, buffer, indices):
        source, ranges, dropped = self.sources[buffer]
        lead = [r.min for r in ranges[:dropped]]
        return source, lead + [r.min + i for r, i in zip(ranges[dropped:], indices)]

    def visit_buffer_load_(self, op):
        op = self._generic(op)
        if op.buffer not in self.sources:
            return op
        source, indices = self._indices(op.buffer, op.indices)
        return BufferLoad(source, indices, op.span)

    def visit_buffer_store_(self, op):
        op = self._generic(op)
        if op.buffer not in self.sources:
            return op
        source, indices = self._indices(op.buffer, op.indices)
        return BufferStore(source, op.value, indices, op.span)


def _is_one(expr):
    return isinstance(expr, IntImm) and expr.value == 1


def lower_opaque_block(func):
    """``func`` with every block lowered to loops and statements."""
    body = _BlockLowerer().visit(func.body)
    return func if body is func.body else func.with_body(body)


def LowerOpaqueBlock():  # noqa: N802  (passes are CamelCase factories)
    """The pass form of ``lower_opaque_block``."""
    return prim_func_pass(lambda f, mod, ctx: lower_opaque_block(f), "LowerOpaqueBlock")
