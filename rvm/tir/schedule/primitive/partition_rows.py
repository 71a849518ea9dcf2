"""partition_rows: full row tiles and one remainder for loops over a symbolic row count.

A matmul over ``n`` rows (``n`` known only at run time) cannot split its row loop
by a register tile of ``rows`` rows without a guard ``i < n`` on every statement
of the tile: inside the reduction loop that is a test per vector lane, and the
accumulator keeps the full ``n`` extent. ``Schedule.partition_rows(depth, rows)``
rewrites the function so that neither is needed (TVM's loop partitioning, done on
the blocks): every top-level loop nest whose loop at ``depth`` runs over ``n`` rows
is copied twice,

    for i in range(n): body(i)       ->   for i_0, i_1 in T.grid(n // rows, rows):
                                              body(i_0 * rows + i_1)
                                          for i_tail in range(n // rows * rows, n):
                                              body(i_tail)

the copy over the remainder with fresh loop variables and blocks (named
``<block>_tail``) and its own copy of every intermediate buffer the nests write
(``<buffer>_tail``), so the two parts share nothing but the kernel's inputs and
outputs and each schedules alone: full tiles of exactly ``rows`` rows, then at
most ``rows - 1`` rows one at a time. It is a schedule primitive so that a trace
replays it (the default CPU schedule's ``prepare`` step): it takes no handles
(every nest of the function is rewritten) and the handles of blocks and loops
taken before it no longer refer to anything. ``keep``: the first ``keep`` nests (a
copy packing a constant weight, ``pad_columns``) stay as they are, shared by both parts.
The loop at ``depth`` may sit under batch loops of any extent (attention's batch and
heads): the tiles and the remainder are then per batch.

``Schedule.partition_innermost(nest, width)`` is the same split on the innermost loop of
one spatial nest (a symbolic extent into whole vectors of ``width`` and a remainder);
both parts write the same buffers, since the nest's iterations are independent.
"""
from rvm.ir.base import structural_equal
from rvm.tir import op as _op
from rvm.tir.buffer import decl_buffer
from rvm.tir.expr import IntImm, IterVar, Var
from rvm.tir.schedule.primitive.utils import check_ints, is_zero
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


def partition_func(func, depth, rows, keep=0):
    """``func`` with every top-level nest's loop at ``depth`` (each over the same symbolic
    extent, from 0) split into full tiles of ``rows`` rows and a remainder (module
    docstring); None when a nest has no such loop. The first ``keep`` nests are left as
    they are and shared by both parts."""
    root = func.body.block
    kept, nests = _nests(root)[:keep], _nests(root)[keep:]
    if not nests:
        return None
    loops = [_loop_at(nest, depth) for nest in nests]
    if any(loop is None or not is_zero(loop.min) for loop in loops):
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


def partition_innermost_func(func, index, width):
    """``func`` with top-level nest ``index``'s innermost loop (symbolic, from 0) split into
    full vectors of ``width`` iterations and a remainder, both writing the same buffers;
    None when it has no such loop or no such nest."""
    root = func.body.block
    nests = _nests(root)
    if not 0 <= index < len(nests):
        return None
    depth, loop = 0, nests[index]
    while isinstance(loop, For) and isinstance(loop.body, For):
        depth, loop = depth + 1, loop.body
    if not isinstance(loop, For) or not is_zero(loop.min) or isinstance(loop.extent, IntImm):
        return None
    tiled, rest = _split_nest(nests[index], depth, loop, width, {})
    body = SeqStmt(nests[:index] + [tiled, rest] + nests[index + 1:])
    return func.with_fields(body=func.body.with_fields(block=root.with_fields(body=body)))


class RowPartition:
    """The Schedule methods partitioning symbolic loops."""

    def _rewrite_root(self, primitive, rewrite, rule):
        """Replaces the root block of the function worked on by ``rewrite(func)``'s;
        ScheduleError naming ``rule`` when it returns None."""
        name = self.func_working_on
        if name is None:
            raise ValueError(f"{primitive}: the module has several functions; call "
                             "work_on(name) first")
        func = self.state.func(name)
        new = rewrite(func)
        if new is None:
            raise self._error(primitive, rule, self.state.roots[name])
        old_root = func.body.block
        self._replace(self.state.roots[name], {old_root: new.body.block},
                      block_reuse={old_root: new.body.block})

    def partition_rows(self, depth, rows, keep=0):
        """Splits the loop at ``depth`` of every top-level nest of the function worked on
        but the first ``keep`` (all over one symbolic extent, from 0) into full tiles of
        ``rows`` rows and a remainder (module docstring); ScheduleError when a nest has
        no such loop."""
        check_ints("partition_rows", ("depth", depth, 0), ("rows", rows, 1), ("keep", keep, 0))
        self._rewrite_root("partition_rows", lambda f: partition_func(f, depth, rows, keep),
                           f"every top-level loop nest must have a loop at depth {depth} "
                           f"over one extent, from 0")
        self._record("PartitionRows", [], [depth, rows, keep], None)

    def partition_innermost(self, nest, width):
        """Splits the innermost loop of top-level nest ``nest`` (a symbolic extent, from 0)
        into full vectors of ``width`` iterations and a remainder (module docstring);
        ScheduleError when the nest has no such loop."""
        check_ints("partition_innermost", ("nest", nest, 0), ("width", width, 1))
        self._rewrite_root("partition_innermost",
                           lambda f: partition_innermost_func(f, nest, width),
                           f"top-level loop nest {nest} must exist and its innermost loop run "
                           f"over a symbolic extent, from 0")
        self._record("PartitionInnermost", [], [nest, width], None)
