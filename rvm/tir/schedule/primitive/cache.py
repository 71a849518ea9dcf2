"""cache_read / cache_write: stage a buffer through a new buffer in another storage scope.

cache_read(B, i, "local") copies the i-th buffer B reads into "<name>_local" before
its readers, which then read the copy; cache_write(B, i, "local") makes B write
"<name>_local" and adds a block copying it back after B. compute_at and
reverse_compute_at then move these copies next to their use (a register tile
of a matmul's output is a cache_write moved under the tile loops).
"""
from rvm.tir import op as _op
from rvm.tir.buffer import decl_buffer
from rvm.tir.expr import BufferLoad, IterVar, Range, Var
from rvm.tir.analysis.region import union_ranges
from rvm.tir.arith import Analyzer
from rvm.tir.free_vars import used_vars
from rvm.tir.schedule import analysis as _an
from rvm.tir.schedule.rv import BlockRV
from rvm.tir.schedule.state import children_of
from rvm.tir.stmt import (
    Block, BlockRealize, BufferRegion, BufferStore, For, ForKind, SeqStmt, stmt_seq,
)
from rvm.tir.stmt_functor import StmtExprMutator

_SCOPES = ("global", "local", "shared", "global.packed")


class _Redirect(StmtExprMutator):
    """In the blocks of ``targets`` (ids), accesses of ``old`` go to ``new``."""

    def __init__(self, old, new, targets):
        self.old, self.new, self.targets = old, new, targets
        self.active = False
        self.reuse = {}

    def visit_buffer_load_(self, op):
        op = self._generic(op)
        if self.active and op.buffer is self.old:
            return BufferLoad(self.new, op.indices)
        return op

    def visit_buffer_store_(self, op):
        op = self._generic(op)
        if self.active and op.buffer is self.old:
            return BufferStore(self.new, op.value, op.indices)
        return op

    def visit_block_(self, op):
        outer = self.active
        self.active = id(op) in self.targets
        new = self._generic(op)
        if self.active:
            swap = [BufferRegion(self.new, r.region) if r.buffer is self.old else r
                    for r in new.reads]
            swap_w = [BufferRegion(self.new, r.region) if r.buffer is self.old else r
                      for r in new.writes]
            new = new.with_fields(reads=tuple(swap), writes=tuple(swap_w))
        self.active = outer
        if new is not op:
            self.reuse[op] = new
        return new


def _copy_nest(name, dst, src, region):
    """Loops and a block copying ``src`` into ``dst`` over ``region`` (Ranges)."""
    loops, iters, values = [], [], []
    for k, (rng, dim) in enumerate(zip(region, src.shape)):
        var = Var(f"ax{k}", dim.dtype)
        loops.append((var, _op.cast(rng.extent, dim.dtype)))
        iters.append(IterVar(Range.from_min_extent(_op.const(0, dim.dtype), dim),
                             Var(f"v{k}", dim.dtype), IterVar.DataPar))
        start = _op.cast(rng.min, dim.dtype)
        values.append(var if _is_zero(start) else _op.add(start, var))
    axes = [iv.var for iv in iters]
    point = [Range.from_min_extent(a, _op.const(1, a.dtype)) for a in axes]
    block = Block(iters, [BufferRegion(src, point)], [BufferRegion(dst, point)], name,
                  BufferStore(dst, BufferLoad(src, axes), axes))
    stmt = BlockRealize(values, True, block)
    for var, extent in reversed(loops):
        stmt = For(var, 0, extent, ForKind.SERIAL, stmt)
    return stmt, block


def _is_zero(expr):
    return getattr(expr, "value", None) == 0


class CacheReadWrite:
    """Schedule methods adding cache stages."""

    def cache_read(self, block, read_buffer_index, storage_scope, consumer_blocks=None):
        """Copies the ``read_buffer_index``-th buffer ``block`` reads into a new buffer of
        ``storage_scope``; its readers (``consumer_blocks``, by default all in the scope) read
        the copy. Returns the copying block."""
        name = "cache_read"
        sref = self._block(block, name)
        blk = sref.stmt
        if not isinstance(read_buffer_index, int) or \
                not 0 <= read_buffer_index < len(blk.reads):
            raise self._error(name, "read_buffer_index must index the block's reads", sref,
                              f"index {read_buffer_index!r}, {len(blk.reads)} reads")
        self._check_scope(name, storage_scope, sref)
        buffer = blk.reads[read_buffer_index].buffer
        scope_sref = _an.scope_of(sref)
        scope = _an.BlockScope(self.state, scope_sref)
        readers = self._consumers_of(name, buffer, scope, consumer_blocks)
        cache = decl_buffer(buffer.shape, buffer.dtype, name=f"{buffer.name}_{storage_scope}",
                            scope=storage_scope)
        # a padded window (a pool's or conv's input read under a bounds test) reaches past
        # the buffer: the copy takes only the part inside it, which is all that is read
        region = _inside(self._scope_region(readers, buffer, "reads"), buffer.shape)
        nest, copy_block = _copy_nest(f"{buffer.name}_{storage_scope}", cache, buffer, region)
        children = _scope_children(scope_sref)
        writers = scope.writers_of(buffer)
        after = max([_child_index(children, w) for w in writers], default=-1)
        first_reader = min(_child_index(children, r) for r in readers)
        if after >= first_reader:
            raise self._error(name, "the buffer is written after a reader starts, so there is "
                              "no place for the copy", sref, f"buffer {buffer.name}")
        self._finish_cache(sref, scope_sref, buffer, cache, readers, nest, after + 1)
        rv = self._new_rv(BlockRV, self.state.block_sref(copy_block))
        return self._record("CacheRead", [block] + list(consumer_blocks or []),
                            [read_buffer_index, storage_scope], rv)

    def cache_write(self, block, write_buffer_index, storage_scope, consumer_blocks=None):
        """Makes ``block`` write its ``write_buffer_index``-th buffer into a new buffer of
        ``storage_scope``, copied back right after it; ``consumer_blocks`` read the new buffer
        directly. Returns the copying-back block."""
        name = "cache_write"
        sref = self._block(block, name)
        blk = sref.stmt
        if not isinstance(write_buffer_index, int) or \
                not 0 <= write_buffer_index < len(blk.writes):
            raise self._error(name, "write_buffer_index must index the block's writes", sref,
                              f"index {write_buffer_index!r}, {len(blk.writes)} writes")
        self._check_scope(name, storage_scope, sref)
        buffer = blk.writes[write_buffer_index].buffer
        scope_sref = _an.scope_of(sref)
        scope = _an.BlockScope(self.state, scope_sref)
        if len(scope.writers_of(buffer)) != 1:
            raise self._error(name, "the block must be the only writer of the buffer in its "
                              "scope", sref, f"buffer {buffer.name}")
        readers = self._consumers_of(name, buffer, scope, consumer_blocks, optional=True)
        cache = decl_buffer(buffer.shape, buffer.dtype, name=f"{buffer.name}_{storage_scope}",
                            scope=storage_scope)
        region = self._scope_region([sref], buffer, "writes")
        nest, copy_block = _copy_nest(f"{buffer.name}_{storage_scope}", buffer, cache, region)
        children = _scope_children(scope_sref)
        position = _child_index(children, sref)
        if any(_child_index(children, r) <= position for r in readers):
            raise self._error(name, "a consumer reading the cache must run after the block's "
                              "loops", sref)
        self._finish_cache(sref, scope_sref, buffer, cache, [sref] + readers, nest,
                           position + 1)
        rv = self._new_rv(BlockRV, self.state.block_sref(copy_block))
        return self._record("CacheWrite", [block] + list(consumer_blocks or []),
                            [write_buffer_index, storage_scope], rv)

    def _check_scope(self, name, storage_scope, sref):
        if storage_scope not in _SCOPES:
            raise self._error(name, f"storage_scope must be one of {', '.join(_SCOPES)}", sref,
                              f"got {storage_scope!r}")

    def _consumers_of(self, name, buffer, scope, consumer_blocks, optional=False):
        readers = [s for s in scope.blocks if any(b is buffer for b in _an.block_reads(s.stmt))
                   and not any(r.buffer is buffer for r in s.stmt.writes)]
        if not consumer_blocks:
            return [] if optional else readers
        chosen = [self._block(b, name) for b in consumer_blocks]
        for c in chosen:
            if not any(c is r for r in readers):
                raise self._error(name, "each of consumer_blocks must read the buffer in the "
                                  "same scope", c, f"buffer {buffer.name}")
        return chosen

    def _scope_region(self, srefs, buffer, kind):
        """The region of ``buffer`` the blocks access, relaxed over all their loops."""
        ana = _an.analyzer_for([])
        region = None
        for s in srefs:
            ranges = _an.loop_ranges(_an.loops_of(s))
            for buf, dims in _an.bound_regions(s.realize, getattr(s.stmt, kind), ranges, ana):
                if buf is buffer:
                    region = dims if region is None else union_ranges(region, dims, ana)
        if region is None:
            region = [Range.from_min_extent(_op.const(0, d.dtype), d) for d in buffer.shape]
        return region

    def _finish_cache(self, sref, scope_sref, buffer, cache, targets, nest, position):
        scope_block = scope_sref.stmt
        redirect = _Redirect(buffer, cache, {id(t.stmt) for t in targets})
        body = redirect.visit(scope_block.body)
        children = list(body.seq) if isinstance(body, SeqStmt) else [body]
        children.insert(position, nest)
        new_scope = scope_block.with_fields(body=stmt_seq(*children),
                                            alloc_buffers=scope_block.alloc_buffers + (cache,))
        reuse = dict(redirect.reuse)
        reuse[scope_block] = new_scope
        self._replace(sref, {scope_sref.realize: scope_sref.realize.with_fields(block=new_scope)},
                      reuse)


def _inside(region, shape):
    """``region`` (Ranges) cut to the buffer's ``shape``: a start that may be negative
    becomes ``max(start, 0)`` and an end provably past the dimension (``n + 1``, a window's
    right padding) becomes the dimension. An end the analyzer cannot place (``s // 64 *
    64``) is kept: a copy reaching past it would be refused by the kernel's guard."""
    ana = Analyzer()
    for var in used_vars(list(shape)).values():  # dimensions count elements: never negative
        ana.bind(var, Range.from_min_extent(_op.const(0, var.dtype),
                                            _op.const(1 << 62, var.dtype)))
    out = []
    for rng, dim in zip(region, shape):
        zero = _op.const(0, dim.dtype)
        lo, hi = _op.cast(rng.min, dim.dtype), _op.cast(rng.min + rng.extent, dim.dtype)
        if not ana.can_prove(lo >= zero):
            lo = _op.max(lo, zero)
        if ana.can_prove(hi > dim):
            hi = dim
        lo = ana.simplify(lo)
        out.append(Range.from_min_extent(lo, ana.simplify(hi - lo)))
    return out


def _scope_children(scope_sref):
    body = scope_sref.stmt.body
    return list(body.seq) if isinstance(body, SeqStmt) else [body]


def _child_index(children, block_sref):
    """The position of the scope child containing the block."""
    target = block_sref.stmt
    for k, child in enumerate(children):
        found = []

        def walk(node):
            if isinstance(node, BlockRealize) and node.block is target:
                found.append(node)
            for c in children_of(node):
                walk(c)

        walk(child)
        if found:
            return k
    raise ValueError(f"block {target.name_hint!r} is not in its scope")
