"""Block read/write region inference: which parts of which buffers a block touches.

Each access ``B[f(v, l)]`` contributes a region: block variables ``v`` stay
symbolic, loop variables ``l`` bound inside the block are relaxed over their
ranges (``vi * 4 + l`` with ``0 <= l < 4`` covers ``[vi * 4, vi * 4 + 4)``).
Regions of one buffer are merged into their bounding box.
"""
from rvm.ir.expr import PrimExpr
from rvm.ir.base import structural_equal
from rvm.tir import op as _op
from rvm.tir.free_vars import used_vars
from rvm.tir.arith import Analyzer, _is_int
from rvm.tir.buffer import Buffer
from rvm.tir.expr import Range, Var
from rvm.tir.stmt import BufferRegion
from rvm.tir.stmt_functor import StmtExprVisitor, substitute


class _Relaxer:
    """Bounds of index expressions with some variables ranging over intervals."""

    def __init__(self):
        self.ranges = {}  # id(var) -> (var, Range)
        self.analyzer = Analyzer()

    def bind(self, var, rng):
        self.ranges[id(var)] = (var, rng)

    def unbind(self, var):
        self.ranges.pop(id(var), None)

    def _uses_relaxed(self, expr):
        return bool(used_vars(expr).keys() & self.ranges.keys())

    def region_of(self, index, dim):
        """The Range ``index`` covers in a dimension of extent ``dim``."""
        index = self.analyzer.simplify(index)
        if not self._uses_relaxed(index):
            return Range.from_min_extent(index, _op.const(1, index.dtype))
        if _is_int(index.dtype):
            linear = self.analyzer._linear(index)
            lower = _op.const(linear.const, index.dtype)
            upper = lower
            ok = True
            for term, coeff in linear.live_terms():
                if isinstance(term, Var) and id(term) in self.ranges:
                    rng = self.ranges[id(term)][1]
                    last = _op.subtract(_op.add(rng.min, rng.extent), 1)
                    lo, hi = (rng.min, last) if coeff > 0 else (last, rng.min)
                    lower = _op.add(lower, _op.multiply(lo, coeff))
                    upper = _op.add(upper, _op.multiply(hi, coeff))
                elif self._uses_relaxed(term):
                    ok = False
                    break
                else:
                    lower = _op.add(lower, _op.multiply(term, coeff))
                    upper = _op.add(upper, _op.multiply(term, coeff))
            if ok:
                lower = self.analyzer.simplify(lower)
                extent = self.analyzer.simplify(_op.add(_op.subtract(upper, lower), 1))
                return Range.from_min_extent(lower, extent)
        return Range.from_min_extent(_op.const(0, dim.dtype), dim)


def _union(a, b, analyzer):
    """The bounding box of two regions of one buffer."""
    out = []
    for ra, rb in zip(a, b):
        if structural_equal(ra, rb, map_free_vars=False):
            out.append(ra)
            continue
        end_a = _op.add(ra.min, ra.extent)
        end_b = _op.add(rb.min, rb.extent)
        lo = analyzer.simplify(_op.min(ra.min, rb.min))
        hi = analyzer.simplify(_op.max(end_a, end_b))
        out.append(Range.from_min_extent(lo, analyzer.simplify(_op.subtract(hi, lo))))
    return out


class _AccessCollector(StmtExprVisitor):
    def __init__(self, local_buffers):
        self.relaxer = _Relaxer()
        self.reads = {}   # id(buffer) -> [buffer, region]
        self.writes = {}
        self.local = {id(b) for b in local_buffers}

    def _add(self, table, buffer, ranges):
        if id(buffer) in self.local:
            return
        entry = table.get(id(buffer))
        if entry is None:
            table[id(buffer)] = [buffer, list(ranges)]
        else:
            entry[1] = _union(entry[1], ranges, self.relaxer.analyzer)

    def _point(self, buffer, indices):
        return [self.relaxer.region_of(i, d) for i, d in zip(indices, buffer.shape)]

    def visit_buffer_load_(self, op):
        super().visit_buffer_load_(op)
        self._add(self.reads, op.buffer, self._point(op.buffer, op.indices))

    def visit_buffer_store_(self, op):
        self.visit_expr(op.value)
        for index in op.indices:
            self.visit_expr(index)
        self._add(self.writes, op.buffer, self._point(op.buffer, op.indices))

    def visit_for_(self, op):
        self.relaxer.bind(op.loop_var, Range.from_min_extent(op.min, op.extent))
        super().visit_for_(op)
        self.relaxer.unbind(op.loop_var)

    def visit_block_realize_(self, op):
        block = op.block
        reads, writes = block.reads, block.writes
        if not reads and not writes:
            reads, writes = get_block_read_write_region(block)
        mapping = {id(iv.var): value for iv, value in zip(block.iter_vars, op.iter_values)}
        local = {id(b) for b in block.alloc_buffers}
        for table, regions in ((self.reads, reads), (self.writes, writes)):
            for region in regions:
                if id(region.buffer) in local:
                    continue
                ranges = []
                for rng, dim in zip(region.region, region.buffer.shape):
                    lo = substitute(rng.min, lambda v: mapping.get(id(v)))
                    last = substitute(_op.subtract(_op.add(rng.min, rng.extent), 1),
                                      lambda v: mapping.get(id(v)))
                    r_lo = self.relaxer.region_of(lo, dim)
                    r_hi = self.relaxer.region_of(last, dim)
                    ranges.append(_union([r_lo], [r_hi], self.relaxer.analyzer)[0])
                self._add(table, region.buffer, ranges)
        for value in op.iter_values:
            self.visit_expr(value)

    def visit_call_(self, op):
        # Buffers handed to packed/extern calls are accessed opaquely: whole buffer, both ways.
        for arg in op.args:
            if isinstance(arg, Buffer):
                full = [Range.from_min_extent(_op.const(0, d.dtype), d) for d in arg.shape]
                self._add(self.reads, arg, full)
                self._add(self.writes, arg, full)
            elif isinstance(arg, PrimExpr):
                self.visit_expr(arg)


def get_block_read_write_region(block):
    """(reads, writes): the BufferRegions ``block`` accesses, in order of first access.

    Buffers allocated by the block are left out. In a reduction block (one with
    an ``init``), the output buffer's read-back by the update is not a read.
    """
    collector = _AccessCollector(block.alloc_buffers)
    if block.init is not None:
        collector.visit_stmt(block.init)
    collector.visit_stmt(block.body)
    writes = [BufferRegion(b, r) for b, r in collector.writes.values()]
    written = {id(b) for b, _ in collector.writes.values()}
    reads = [BufferRegion(b, r) for b, r in collector.reads.values()
             if not (block.init is not None and id(b) in written)]
    return reads, writes
