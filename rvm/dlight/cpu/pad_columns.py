"""Padding a narrow matmul's columns to whole vectors (the small-N case).

A matmul whose ``N`` output columns are fewer than one vector (the 10-wide output layer
of a classifier) accumulates ``N`` floats per row: rows ``N`` floats apart in the
register tile, each a partial vector with a mask or a scalar tail on every FMA. Given
a weight ``W[k, j]`` that is a constant at every call (``layout_free_buffers``),
``pad_columns`` rewrites the kernel before scheduling so that the tile is whole vectors
(a weight read ``W[j, k]``, a linear layer's, is transposed by the same copy):

    W_pad[k, jp] = if_then_else(jp < N, W[k, jp], 0)          jp < P   (packing, see pack.py)
    Y_pad[i.., jp] += X[i.., k] * W_pad[k, jp]                 jp < P   (Y_pad local)
    Y[i.., j] = Y_pad[i.., j]                                  j < N
    Z[i.., j] = epilogue(Y[i.., j])                            j < N

with ``P`` the column count rounded up to the vector width. The copy into ``W_pad``
carries ``LAYOUT_REWRITE``, so ``SplitLayoutRewritePreproc`` applies it to the constant
once, at build (its zero columns included); the padded columns' products are zero and
never read back. ``Y_pad`` is scoped "local": the matmul rule keeps a tile of it in
registers and moves the copy of the ``N`` real columns (the one writer of ``Y``, as
``cache_write``'s copy is) under the tile, the epilogue inlined into it.
"""
from rvm.dlight.cpu.pack import LAYOUT_REWRITE, is_layout_free, param_index
from rvm.tir import op as _op
from rvm.tir.analysis.block_access import get_block_read_write_region
from rvm.tir.buffer import decl_buffer
from rvm.tir.expr import BufferLoad, IntImm, IterVar, Range, Var
from rvm.tir.stmt import Block, BlockRealize, BufferStore, For, ForKind, SeqStmt
from rvm.tir.stmt_functor import StmtExprMutator, post_order_visit

PAD = "_pad"
# Marks the copy of the real columns (the rule moves it under the tile, not inlines it).
PAD_COPY = "dlight.pad_copy"


class _Pad(StmtExprMutator):
    """Widens the matmul block ``name`` (its column loop ``j_var``, axis ``j_axis``) to
    ``padded`` columns reading ``W_pad``; every access of ``Y`` becomes one of ``Y_pad``."""

    def __init__(self, name, j_var, j_axis, padded, buffers, transposed):
        self.name, self.j_var, self.j_axis = name, j_var, j_axis
        self.padded, self.buffers, self.transposed = padded, buffers, transposed
        self.w_pad = None if not buffers else list(buffers.values())[0]

    def visit_buffer_load_(self, op):
        new = self._generic(op)
        if self.transposed and self.buffers.get(id(op.buffer)) is self.w_pad:
            new = new.with_fields(indices=list(reversed(new.indices)))  # W[j, k] -> W_pad[k, j]
        return new

    def visit_buffer(self, buffer):
        return self.buffers.get(id(buffer), buffer)

    def visit_for_(self, op):
        new = self._generic(op)
        if op.loop_var is self.j_var:
            new = new.with_fields(extent=_op.const(self.padded, op.extent.dtype))
        return new

    def visit_block_(self, op):
        new = self._generic(op)
        if op.name_hint == self.name:
            iter_vars = tuple(
                IterVar(Range.from_min_extent(iv.dom.min,
                                              _op.const(self.padded, iv.dom.extent.dtype)),
                        iv.var, iv.iter_type) if iv.var is self.j_axis else iv
                for iv in new.iter_vars)
            new = new.with_fields(iter_vars=iter_vars)
        if new is not op:
            reads, writes = get_block_read_write_region(new)
            new = new.with_fields(reads=tuple(reads), writes=tuple(writes))
        return new


def _pad_nest(weight, padded_buffer, cols, transposed):
    """for k, jp: W_pad[k, jp] = if_then_else(jp < cols, W[k, jp], 0) (``transposed``:
    ``W[jp, k]``), marked LAYOUT_REWRITE."""
    k_extent, dtype = padded_buffer.shape[0], padded_buffer.shape[0].dtype
    k, j = Var("k", dtype), Var("j", dtype)
    vk, vj = Var("vk", dtype), Var("vj", dtype)
    zero = _op.const(0, dtype)
    padded = padded_buffer.shape[1]
    indices = [vj, vk] if transposed else [vk, vj]
    value = _op.if_then_else(_op.less(vj, _op.const(cols, dtype)), BufferLoad(weight, indices),
                             _op.const(0, weight.dtype))
    body = BufferStore(padded_buffer, value, [vk, vj])
    block = Block([IterVar((zero, k_extent), vk, IterVar.DataPar),
                   IterVar((zero, padded), vj, IterVar.DataPar)], [], [],
                  weight.name + PAD, body, annotations={LAYOUT_REWRITE: 1})
    reads, writes = get_block_read_write_region(block)
    block = block.with_fields(reads=tuple(reads), writes=tuple(writes))
    realize = BlockRealize([k, j], _op.const(True, "bool"), block)
    return For(k, zero, k_extent, ForKind.SERIAL, For(j, zero, padded, ForKind.SERIAL, realize))


def pad_columns(sch, mm, j_loop, j_axis, k_axis, lanes):
    """The kernel of ``sch`` with matmul block ``mm``'s columns padded to a whole vector
    (module docstring), or None when it does not apply: more columns than one vector, a
    column count the vector width divides, no 2-D constant weight read at exactly (k, j)
    or (j, k), or a result that is not an intermediate."""
    cols = int(sch.get(j_loop).extent.value)
    if cols >= lanes:
        return None
    blk = sch.get(mm)
    func = sch.mod["main"]
    root = func.body.block
    out = blk.writes[0].buffer
    if not any(b is out for b in root.alloc_buffers):
        return None
    weights = [(r.buffer, r.region[0].min is j_axis) for r in blk.reads
               if len(r.region) == 2 and param_index(sch, r.buffer) is not None
               and {id(r.region[0].min), id(r.region[1].min)} == {id(k_axis), id(j_axis)}
               and is_layout_free(sch, r.buffer)]
    if len(weights) != 1 or not all(isinstance(d, IntImm) for d in weights[0][0].shape):
        return None
    (weight, transposed), = weights
    k_extent = weight.shape[1 if transposed else 0]
    w_pad = decl_buffer((k_extent, _op.const(lanes, k_extent.dtype)), weight.dtype,
                        weight.name + PAD)
    y_pad = decl_buffer((*out.shape[:-1], _op.const(lanes, out.shape[-1].dtype)), out.dtype,
                        out.name + PAD, scope="local")
    mutator = _Pad(blk.name_hint, sch.get(j_loop).loop_var, j_axis, lanes,
                   {id(weight): w_pad, id(out): y_pad}, transposed)
    # the matmul's nest only: the epilogue reads the real columns, copied out of Y_pad
    nests = list(root.body.seq) if isinstance(root.body, SeqStmt) else [root.body]
    body = [_pad_nest(weight, w_pad, cols, transposed)]
    for nest in nests:
        if _has_block(nest, blk.name_hint):
            body += [mutator.visit(nest), _copy_nest(y_pad, out)]
        else:
            body.append(nest)
    block = root.with_fields(body=SeqStmt(body), alloc_buffers=tuple(root.alloc_buffers)
                             + (y_pad, w_pad))
    return func.with_fields(body=func.body.with_fields(block=block))


def _has_block(stmt, name):
    found = []
    post_order_visit(stmt, lambda node: found.append(node)
                     if isinstance(node, Block) and node.name_hint == name else None)
    return bool(found)


def _copy_nest(src, dst):
    """for i..: dst[i..] = src[i..] over ``dst``'s shape (its real columns)."""
    loops = [Var(f"i{d}", e.dtype) for d, e in enumerate(dst.shape)]
    axes = [Var(f"v{d}", e.dtype) for d, e in enumerate(dst.shape)]
    block = Block([IterVar((_op.const(0, e.dtype), e), v, IterVar.DataPar)
                   for v, e in zip(axes, dst.shape)], [], [], dst.name + "_real",
                  BufferStore(dst, BufferLoad(src, axes), axes), annotations={PAD_COPY: 1})
    reads, writes = get_block_read_write_region(block)
    stmt = BlockRealize(loops, _op.const(True, "bool"),
                        block.with_fields(reads=tuple(reads), writes=tuple(writes)))
    for var, extent in reversed(list(zip(loops, dst.shape))):
        stmt = For(var, _op.const(0, extent.dtype), extent, ForKind.SERIAL, stmt)
    return stmt
