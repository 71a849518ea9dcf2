"""HoistAccumulatorTile: a loop that updates the same small tile of a local buffer in every
iteration works on a copy of the tile, loaded before the loop and stored after it.

This is how a register-tiled kernel reaches the C compiler in a form it keeps in
registers: the accumulator of a tiled matmul is a tile of a larger cache buffer
(the schedule's ``cache_write``), indexed through the outer tile loops; C
compilers keep array elements in registers across a loop only when the array is
small and its indices do not depend on enclosing loops.

    for k in range(512):                               acc = T.allocate([8, 32], ...)
        for i3 in T.unroll(8):                         acc[i3, j3] = C_local[i2 * 8 + i3, j3]
            for j3 in T.vectorized(32):       ->       for k in range(512):
                C_local[i2 * 8 + i3, j3] += ...            ... acc[i3, j3] += ...
                                                       C_local[i2 * 8 + i3, j3] = acc[i3, j3]

Applies to the outermost serial loop whose accesses of a buffer allocated outside it
cover a region that does not depend on the loop and has at most ``TILE_BYTES``.
"""
from rvm.tir import op as _op
from rvm.tir.free_vars import used_vars
from rvm.tir.arith import Analyzer
from rvm.tir.buffer import decl_buffer
from rvm.tir.expr import BufferLoad, IntImm, Range, Var
from rvm.tir.stmt import Allocate, BufferStore, DeclBuffer, For, ForKind, stmt_seq
from rvm.tir.stmt_functor import StmtExprMutator, StmtMutator
from rvm.tir.transform.plan_buffer_allocation import (
    access_regions, bounding_box, collect_accesses, collect_all_accesses,
)
from rvm.tir.transform.prim_func_pass import prim_func_pass

# Three quarters of an AVX-512 register file (32 x 64 bytes): the rest holds operands.
TILE_BYTES = 1536


class _Redirect(StmtExprMutator):
    def __init__(self, old, new, starts, analyzer):
        self.old, self.new, self.starts, self.analyzer = old, new, starts, analyzer

    def _index(self, indices):
        return [self.analyzer.simplify(_op.subtract(i, s)) for i, s in zip(indices, self.starts)]

    def visit_buffer_load_(self, op):
        op = self._generic(op)
        if op.buffer is self.old:
            return BufferLoad(self.new, self._index(op.indices))
        return op

    def visit_buffer_store_(self, op):
        op = self._generic(op)
        if op.buffer is self.old:
            return BufferStore(self.new, op.value, self._index(op.indices))
        return op


def _copy(dst, dst_index, src, src_index, extents, dtype_of):
    """Loops copying ``src[src_index(t)]`` to ``dst[dst_index(t)]`` over a tile."""
    variables = [Var(f"t{k}", dtype_of(k)) for k in range(len(extents))]
    body = BufferStore(dst, BufferLoad(src, src_index(variables)), dst_index(variables))
    for var, extent in reversed(list(zip(variables, extents))):
        # The extent in the loop variable's type (a region's extent may be int32 where the
        # buffer's shape is int64): a loop's range and variable always agree.
        body = For(var, IntImm(var.dtype, 0), IntImm(var.dtype, extent.value), ForKind.SERIAL,
                   body)
    return body


class _Hoister(StmtMutator):
    def __init__(self, tile_bytes):
        self.tile_bytes = tile_bytes
        self.analyzer = Analyzer()
        self.declared = []  # buffers declared (DeclBuffer over an Allocate) around the visit

    def visit_allocate_(self, op):
        # A chain of allocations (one per intermediate of a kernel) is walked without
        # recursion, so kernels with very many intermediates stay within the recursion limit.
        chain, node = [], op
        while isinstance(node, Allocate) and isinstance(node.body, DeclBuffer) and \
                node.body.buffer.data is node.buffer_var:
            chain.append((node, node.body))
            node = node.body.body
        if not chain:
            return self._generic(op)
        depth = len(self.declared)
        self.declared.extend(decl.buffer for _, decl in chain)
        try:
            core = self.visit_stmt(node)
        finally:
            del self.declared[depth:]
        if core is node:
            return op
        for alloc, decl in reversed(chain):
            core = alloc.with_fields(body=decl.with_fields(body=core))
        return core

    def visit_for_(self, op):
        self.analyzer.bind(op.loop_var, Range.from_min_extent(op.min, op.extent))
        if op.kind == ForKind.SERIAL and not _is_one(op.extent) and self.declared:
            # the accesses of every declared buffer in one walk of the loop
            found = collect_all_accesses(op.body, [b.data for b in self.declared])
            for buffer in reversed(self.declared):
                accesses = found[id(buffer.data)]
                if not accesses or not any(a.is_write for a in accesses):
                    continue
                hoisted = self._hoist(op, buffer, accesses)
                if hoisted is not None:
                    return hoisted
        return self._generic(op)

    def _hoist(self, loop, buffer, accesses):
        if not all(isinstance(d, IntImm) for d in buffer.shape) or buffer.strides:
            return None
        regions = access_regions(accesses, -1, self.analyzer)
        if regions is None:
            return None
        box = bounding_box(regions, self.analyzer)
        extents = []
        for rng, dim in zip(box, buffer.shape):
            if id(loop.loop_var) in used_vars(rng.min) or \
                    not isinstance(rng.extent, IntImm):
                return None
            if not (self.analyzer.can_prove(_op.greater_equal(rng.min, 0)) and
                    self.analyzer.can_prove(_op.less_equal(_op.add(rng.min, rng.extent), dim))):
                return None
            extents.append(rng.extent)
        size = 1
        for e in extents:
            size *= e.value
        if size * buffer.dtype.itemsize > self.tile_bytes:
            return None
        starts = [rng.min for rng in box]
        if all(_is_zero(st) and e.value == d.value for st, e, d in zip(starts, extents,
                                                                       buffer.shape)):
            return None  # the buffer is its own tile already
        tile = decl_buffer(extents, buffer.dtype, name=f"{buffer.name}_tile", scope="local")
        body = _Redirect(buffer, tile, starts, self.analyzer).visit(loop.body)
        if any(acc for acc in collect_accesses(body, buffer.data) or []):
            return None  # accessed through another view: leave it

        def dtype_of(k):
            return buffer.shape[k].dtype

        def shifted(variables):
            return [_op.add(s, v) for s, v in zip(starts, variables)]

        parts = []
        if any(not a.is_write for a in accesses):
            parts.append(_copy(tile, list, buffer, shifted, extents, dtype_of))
        parts.append(loop.with_fields(body=self.visit_stmt(body)))
        parts.append(_copy(buffer, shifted, tile, list, extents, dtype_of))
        return Allocate(tile.data, tile.dtype, tile.shape, True,
                        DeclBuffer(tile, stmt_seq(*parts)), annotations={"scope": "local"})


def _is_zero(expr):
    return isinstance(expr, IntImm) and expr.value == 0


def _is_one(expr):
    return isinstance(expr, IntImm) and expr.value == 1


def hoist_accumulator_tile(func, tile_bytes=TILE_BYTES):
    """``func`` with loop-invariant local tiles hoisted around their loops."""
    hoister = _Hoister(tile_bytes)
    for buf in func.buffer_map.values():
        for dim in buf.shape:
            if hasattr(dim, "name_hint"):
                hoister.analyzer.bind(dim, Range(_op.const(0, dim.dtype),
                                                 _op.max_value(dim.dtype)))
    body = hoister.visit(func.body)
    return func if body is func.body else func.with_body(body)


def HoistAccumulatorTile():  # noqa: N802  (passes are CamelCase factories)
    """The pass form of ``hoist_accumulator_tile``."""
    return prim_func_pass(lambda f, mod, ctx: hoist_accumulator_tile(f), "HoistAccumulatorTile")
