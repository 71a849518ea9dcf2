"""pad_columns: a narrow matmul's columns padded to a whole vector (the small-N case).

A matmul whose ``N`` output columns are fewer than one vector (the 10-wide output layer
of a classifier) accumulates ``N`` floats per row: rows ``N`` floats apart in a register
tile, each a partial vector with a mask or a scalar tail on every FMA.
``Schedule.pad_columns(block, read_buffer_index, width)`` rewrites the function so that
the tile is whole vectors of ``width`` columns: given the block's read
``read_buffer_index``, a 2-D parameter ``W[k, j]`` of constant shape (or ``W[j, k]``, a
linear layer's weight, transposed by the same copy),

    W_pad[k, jp] = if_then_else(jp < N, W[k, jp], 0)          jp < P
    Y_pad[i.., jp] += X[i.., k] * W_pad[k, jp]                 jp < P   (Y_pad local)
    Y[i.., j] = Y_pad[i.., j]                                  j < N     (block Y_real)
    Z[i.., j] = epilogue(Y[i.., j])                            j < N

with ``P = width``, ``Y`` the block's one output (an intermediate the function allocates)
and ``j`` its last index. The copy into ``W_pad`` (block ``<W>_pad``) is the function's
first nest; the copy of the real columns follows the matmul's nest. The padded columns'
products are zero and never read back. It is a schedule primitive so that a trace
replays it (the default CPU schedule's ``prepare`` step); the handles of blocks and loops
taken before it no longer refer to anything. The matmul rule marks the copy into
``W_pad`` for packing at build (a constant weight's zero columns included) and keeps a
tile of ``Y_pad`` in registers, the copy of the real columns moved under it.
"""
from rvm.tir import op as _op
from rvm.tir.analysis.block_access import get_block_read_write_region
from rvm.tir.buffer import decl_buffer
from rvm.tir.expr import BufferLoad, IntImm, IterVar, Range, Var
from rvm.tir.free_vars import used_vars
from rvm.tir.schedule.primitive.utils import check_ints, is_zero
from rvm.tir.stmt import Block, BlockRealize, BufferStore, For, ForKind, SeqStmt
from rvm.tir.stmt_functor import StmtExprMutator, post_order_visit

PAD = "_pad"
REAL = "_real"


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
    ``W[jp, k]``)."""
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
                  weight.name + PAD, body)
    reads, writes = get_block_read_write_region(block)
    block = block.with_fields(reads=tuple(reads), writes=tuple(writes))
    realize = BlockRealize([k, j], _op.const(True, "bool"), block)
    return For(k, zero, k_extent, ForKind.SERIAL, For(j, zero, padded, ForKind.SERIAL, realize))


def _find(root, pred):
    found = []
    post_order_visit(root, lambda node: found.append(node) if pred(node) else None)
    return found


def _operands(func, realize, index, width):
    """(the column loop var, its extent, the column axis, the weight, transposed) of the
    block ``realize`` runs, or (None, reason) when the rewrite does not apply."""
    blk, root = realize.block, func.body.block
    if len(blk.writes) != 1 or not any(b is blk.writes[0].buffer for b in root.alloc_buffers):
        return None, "the block must write one buffer the function allocates"
    j_axis = blk.writes[0].region[-1].min
    axes = {id(iv.var): (iv, v) for iv, v in zip(blk.iter_vars, realize.iter_values)}
    if id(j_axis) not in axes or axes[id(j_axis)][0].iter_type != IterVar.DataPar \
            or not isinstance(axes[id(j_axis)][1], Var):
        return None, "the output's last index must be a spatial block axis bound to a loop"
    j_var = axes[id(j_axis)][1]
    loops = _find(root.body, lambda n: isinstance(n, For) and n.loop_var is j_var)
    if len(loops) != 1 or not is_zero(loops[0].min) \
            or not isinstance(loops[0].extent, IntImm):
        return None, "the column loop must run over a constant extent, from 0"
    cols = loops[0].extent.value
    if cols >= width:
        return None, f"the columns ({cols}) must be fewer than the width ({width})"
    if index >= len(blk.reads):
        return None, f"the block reads {len(blk.reads)} buffers, not {index + 1}"
    region = blk.reads[index]
    weight = region.buffer
    params = list(func.buffer_map.values())
    mins = [r.min for r in region.region]
    if not any(p is weight for p in params) or len(mins) != 2 or \
            not all(isinstance(d, IntImm) for d in weight.shape):
        return None, "the read must be a 2-D parameter of constant shape"
    k_axis = mins[1] if mins[0] is j_axis else mins[0]
    if not any(m is j_axis for m in mins) or k_axis is j_axis or id(k_axis) not in axes \
            or axes[id(k_axis)][0].iter_type == IterVar.DataPar:
        return None, "the read must be indexed by the column axis and a reduction axis"
    for other in blk.reads:  # a padded column must read nothing but zeros of W_pad
        if other.buffer is not weight and other.buffer is not blk.writes[0].buffer and \
                any(id(j_axis) in used_vars([r.min, r.extent])
                    for r in other.region):
            return None, (f"only the padded read may be indexed by the column axis, "
                          f"but the block also reads {other.buffer.name} along it")
    return (j_var, cols, j_axis, weight, mins[0] is j_axis), None


def pad_func(func, realize, index, width):
    """``func`` with the block ``realize`` runs padded to ``width`` columns (module
    docstring), or (None, the reason it does not apply)."""
    found, reason = _operands(func, realize, index, width)
    if found is None:
        return None, reason
    j_var, cols, j_axis, weight, transposed = found
    blk, root = realize.block, func.body.block
    out = blk.writes[0].buffer
    k_extent = weight.shape[1 if transposed else 0]
    w_pad = decl_buffer((k_extent, _op.const(width, k_extent.dtype)), weight.dtype,
                        weight.name + PAD)
    y_pad = decl_buffer((*out.shape[:-1], _op.const(width, out.shape[-1].dtype)), out.dtype,
                        out.name + PAD, scope="local")
    mutator = _Pad(blk.name_hint, j_var, j_axis, width,
                   {id(weight): w_pad, id(out): y_pad}, transposed)
    # the matmul's nest only: the epilogue reads the real columns, copied out of Y_pad
    nests = list(root.body.seq) if isinstance(root.body, SeqStmt) else [root.body]
    body = [_pad_nest(weight, w_pad, cols, transposed)]
    for nest in nests:
        if _find(nest, lambda n: n is blk):
            body += [mutator.visit(nest), _copy_nest(y_pad, out)]
        else:
            body.append(nest)
    block = root.with_fields(body=SeqStmt(body), alloc_buffers=tuple(root.alloc_buffers)
                             + (y_pad, w_pad))
    return func.with_fields(body=func.body.with_fields(block=block)), None


def _copy_nest(src, dst):
    """for i..: dst[i..] = src[i..] over ``dst``'s shape (its real columns)."""
    loops = [Var(f"i{d}", e.dtype) for d, e in enumerate(dst.shape)]
    axes = [Var(f"v{d}", e.dtype) for d, e in enumerate(dst.shape)]
    block = Block([IterVar((_op.const(0, e.dtype), e), v, IterVar.DataPar)
                   for v, e in zip(axes, dst.shape)], [], [], dst.name + REAL,
                  BufferStore(dst, BufferLoad(src, axes), axes))
    reads, writes = get_block_read_write_region(block)
    stmt = BlockRealize(loops, _op.const(True, "bool"),
                        block.with_fields(reads=tuple(reads), writes=tuple(writes)))
    for var, extent in reversed(list(zip(loops, dst.shape))):
        stmt = For(var, _op.const(0, extent.dtype), extent, ForKind.SERIAL, stmt)
    return stmt


class ColumnPadding:
    """The Schedule method padding a narrow matmul's columns."""

    def pad_columns(self, block, read_buffer_index, width):
        """Pads the columns of ``block`` (a matmul whose output is an intermediate) to
        ``width``, through a zero-padded copy of its read ``read_buffer_index`` (module
        docstring); ScheduleError when the block is not such a matmul."""
        sref = self._block(block, "pad_columns")
        check_ints("pad_columns", ("read_buffer_index", read_buffer_index, 0),
                   ("width", width, 1))
        func = self.state.func(sref.func_name)
        new, reason = pad_func(func, sref.realize, read_buffer_index, width)
        if new is None:
            raise self._error("pad_columns", reason, sref)
        old_root = func.body.block
        self._replace(self.state.roots[sref.func_name], {old_root: new.body.block},
                      block_reuse={old_root: new.body.block})
        self._record("PadColumns", [block], [read_buffer_index, width], None)
