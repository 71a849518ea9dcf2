"""Full row tiles and one remainder for a kernel whose row count is symbolic.

A matmul over ``n`` rows (``n`` known only at run time) cannot split its row loop
by a register tile of ``rows`` rows without a guard ``i < n`` on every statement
of the tile: inside the reduction loop that is a test per vector lane, and the
accumulator keeps the full ``n`` extent. ``partition_rows`` rewrites the kernel
before scheduling so that neither is needed (TVM's loop partitioning, done on the
blocks): every top-level loop nest whose loop at ``depth`` runs over ``n`` rows
is copied twice,

    for i in range(n): body(i)       ->   for i_0, i_1 in T.grid(n // rows, rows):
                                              body(i_0 * rows + i_1)
                                          for i_tail in range(n // rows * rows, n):
                                              body(i_tail)

the copy over the remainder with fresh loop variables and blocks (named
``<block>_tail``) and its own copy of every intermediate buffer the nests write
(``<buffer>_tail``), so the two parts share nothing but the kernel's inputs and
outputs and each schedules alone: full tiles of exactly ``rows`` rows, then at
most ``rows - 1`` rows one at a time.
"""
from rvm.ir.structural import structural_equal
from rvm.tir import op as _op
from rvm.tir.buffer import decl_buffer
from rvm.tir.expr import IntImm, IterVar, Var
from rvm.tir.stmt import Block, BlockRealize, For, ForKind, SeqStmt
from rvm.tir.stmt_functor import StmtExprMutator, post_order_visit, substitute

TAIL = "_tail"


class _Renew(StmtExprMutator):
    """A copy of a statement with fresh loop variables, block axes and block names, and the
    buffers of ``buffers`` ({id(old): new}) replaced."""

    def __init__(self, buffers):
        self.buffers = buffers
        self.vars = {}

    def _fresh(self, var):
        new = Var(var.name_hint + TAIL, var.dtype)
        self.vars[id(var)] = new
        return new

    def visit_var_(self, op):
        return self.vars.get(id(op), op)

    def visit_buffer(self, buffer):
        return self.buffers.get(id(buffer), buffer)

    def visit_for_(self, op):
        loop_var = self._fresh(op.loop_var)
        return self._generic(op).with_fields(loop_var=loop_var)

    def visit_block_(self, op):
        iter_vars = tuple(IterVar(iv.dom, self._fresh(iv.var), iv.iter_type)
                          for iv in op.iter_vars)
        return self._generic(op).with_fields(iter_vars=iter_vars,
                                             name_hint=op.name_hint + TAIL)


def top_nests(func):
    """The top-level loop nests of ``func``'s root block."""
    return _nests(func.body.block)


def nest_block(nest):
    """The block a perfect nest of loops runs, or None."""
    while isinstance(nest, For):
        nest = nest.body
    return nest.block if isinstance(nest, BlockRealize) else None


def _nests(root_block):
    body = root_block.body
    return list(body.seq) if isinstance(body, SeqStmt) else [body]


def _loop_at(nest, depth):
    loop = nest
    for _ in range(depth):
        loop = loop.body if isinstance(loop, For) else None
    return loop if isinstance(loop, For) else None


def _rebuild(nest, depth, inner):
    """``nest`` with its loop at ``depth`` replaced by the statement ``inner``."""
    if depth == 0:
        return inner
    return nest.with_fields(body=_rebuild(nest.body, depth - 1, inner))


def partition_rows(func, depth, rows, keep=0):
    """``func`` with every top-level nest's loop at ``depth`` (each over the same symbolic
    extent, from 0) split into full tiles of ``rows`` rows and a remainder (module
    docstring); None when a nest has no such loop. The first ``keep`` nests (a packing
    copy of a weight, pad_columns.py) are left as they are and shared by both parts."""
    root = func.body.block
    kept, nests = _nests(root)[:keep], _nests(root)[keep:]
    loops = [_loop_at(nest, depth) for nest in nests]
    if any(loop is None or not _is_zero(loop.min) for loop in loops):
        return None
    extent = loops[0].extent
    if any(not structural_equal(loop.extent, extent) for loop in loops):
        return None
    main, tail = [], []
    shared = set()
    for nest in kept:
        post_order_visit(nest, lambda node: shared.update(
            id(w.buffer) for w in node.writes) if isinstance(node, Block) else None)
    buffers = {id(b): decl_buffer(b.shape, b.dtype, b.name + TAIL, scope=b.scope)
               for b in root.alloc_buffers if id(b) not in shared}
    for nest, loop in zip(nests, loops):
        tiled, rest = _split_nest(nest, depth, loop, rows, buffers)
        main.append(tiled)
        tail.append(rest)
    block = root.with_fields(body=SeqStmt(kept + main + tail),
                             alloc_buffers=tuple(root.alloc_buffers) + tuple(buffers.values()))
    return func.with_fields(body=func.body.with_fields(block=block))


def _split_nest(nest, depth, loop, rows, buffers):
    """(full tiles, remainder) of ``nest`` whose loop at ``depth`` is ``loop`` (from 0); the
    remainder's buffers of ``buffers`` ({id(old): new}) replaced."""
    var, extent, dtype = loop.loop_var, loop.extent, loop.loop_var.dtype
    tiles = _op.floordiv(extent, _op.const(rows, dtype))
    start = _op.multiply(tiles, _op.const(rows, dtype))
    i_o, i_i = Var(var.name_hint + "_0", dtype), Var(var.name_hint + "_1", dtype)
    body = substitute(loop.body, {var: _op.add(_op.multiply(i_o, _op.const(rows, dtype)), i_i)})
    tiled = For(i_o, 0, tiles, ForKind.SERIAL,
                For(i_i, 0, _op.const(rows, dtype), ForKind.SERIAL, body))
    copy = _Renew(buffers).visit(nest)
    inner = _loop_at(copy, depth)
    last = inner.with_fields(min=start, extent=_op.subtract(extent, start))
    return _rebuild(nest, depth, tiled), _rebuild(copy, depth, last)


def partition_innermost(func, index, width):
    """``func`` with top-level nest ``index``'s innermost loop (symbolic, from 0) split into
    full vectors of ``width`` iterations and a remainder, both writing the same buffers (the
    nest is spatial: its iterations are independent); None when it has no such loop."""
    root = func.body.block
    nests = _nests(root)
    depth, loop = 0, nests[index]
    while isinstance(loop.body, For):
        depth, loop = depth + 1, loop.body
    if not isinstance(loop, For) or not _is_zero(loop.min) or isinstance(loop.extent, IntImm):
        return None
    tiled, rest = _split_nest(nests[index], depth, loop, width, {})
    body = SeqStmt(nests[:index] + [tiled, rest] + nests[index + 1:])
    return func.with_fields(body=func.body.with_fields(block=root.with_fields(body=body)))


def _is_zero(expr):
    return isinstance(expr, IntImm) and expr.value == 0
