"""CompactBufferAllocation: shrink each allocation to the region its accesses touch.

After PlanAndUpdateBufferAllocationLocation an intermediate is allocated inside the
loops that use it, but keeps its full shape: a 4x16 register tile of a 512x512
accumulator still allocates 512x512 per iteration. This pass gives it the
shape of the region one execution of the allocation accesses (upper-bounded to
constants) and indexes it relative to the region's start.

    for i_0 in range(128):                         for i_0 in range(128):
        C_local = T.allocate([512, 512])    ->         C_local = T.allocate([4, 512])
        C_local[i_0 * 4 + i_1, j] = ...                C_local[i_1, j] = ...
"""
from rvm.tir import op as _op
from rvm.tir.arith import Analyzer
from rvm.tir.buffer import Buffer
from rvm.tir.expr import BufferLoad, IntImm, Range
from rvm.tir.stmt import BufferStore
from rvm.tir.stmt_functor import StmtExprMutator, StmtMutator
from rvm.transform.tir.plan_buffer_allocation import (
    access_regions, bounding_box, collect_accesses,
)
from rvm.transform.tir.prim_func_pass import prim_func_pass


class _Reindex(StmtExprMutator):
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


class _Compactor(StmtMutator):
    def __init__(self):
        self.analyzer = Analyzer()

    def visit_for_(self, op):
        self.analyzer.bind(op.loop_var, Range.from_min_extent(op.min, op.extent))
        return self._generic(op)

    def visit_allocate_(self, op):
        op = self._generic(op)
        decl = op.body
        if getattr(decl, "buffer", None) is None or decl.buffer.data is not op.buffer_var:
            return op
        buf = decl.buffer
        if buf.strides or not all(isinstance(d, IntImm) for d in buf.shape):
            return op
        accesses = collect_accesses(decl.body, op.buffer_var)
        if not accesses:
            return op
        regions = access_regions(accesses, -1, self.analyzer)
        if regions is None:
            return op
        box = bounding_box(regions, self.analyzer)
        shape, starts = [], []
        for rng, dim in zip(box, buf.shape):
            _, upper = self.analyzer.const_int_bound(rng.extent)
            if upper is None or upper >= dim.value:
                shape.append(dim)
                starts.append(_op.const(0, dim.dtype))
            else:
                shape.append(_op.const(max(upper, 1), dim.dtype))
                starts.append(_op.cast(rng.min, dim.dtype))
        if all(a is b for a, b in zip(shape, buf.shape)):
            return op
        new = Buffer(buf.data, buf.dtype, shape, name=buf.name, scope=buf.scope)
        body = _Reindex(buf, new, starts, self.analyzer).visit(decl.body)
        return op.with_fields(extents=tuple(shape), body=decl.with_fields(buffer=new, body=body))


def compact_buffer_allocation(func):
    """``func`` with every allocation shrunk to the region it accesses."""
    compactor = _Compactor()
    for buf in func.buffer_map.values():
        for dim in buf.shape:
            if hasattr(dim, "name_hint"):
                compactor.analyzer.bind(dim, Range(_op.const(0, dim.dtype),
                                                   _op.max_value(dim.dtype)))
    body = compactor.visit(func.body)
    return func if body is func.body else func.with_body(body)


def CompactBufferAllocation():  # noqa: N802  (passes are CamelCase factories)
    """The pass form of ``compact_buffer_allocation``."""
    return prim_func_pass(lambda f, mod, ctx: compact_buffer_allocation(f),
                          "CompactBufferAllocation")
