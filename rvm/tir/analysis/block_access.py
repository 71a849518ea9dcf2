"""Block read/write region inference: which parts of which buffers a block touches.

Each access ``B[f(v, l)]`` contributes a region: block variables ``v`` stay
symbolic, loop variables ``l`` bound inside the block are relaxed over their
ranges (``vi * 4 + l`` with ``0 <= l < 4`` covers ``[vi * 4, vi * 4 + 4)``).
Regions of one buffer are merged into their bounding box: per dimension, the smallest
start and the largest end of the accesses, keeping only bounds no other provably covers,
and widened to constant bounds when more than ``MAX_BOUNDS`` remain.
"""
from rvm.ir.expr import PrimExpr
from rvm.ir.base import structural_equal
from rvm.tir import op as _op
from rvm.tir.free_vars import used_vars
from rvm.tir.arith import Analyzer, _is_int
from rvm.tir.buffer import Buffer
from rvm.tir.expr import Range, Sub, Var
from rvm.tir.stmt import BufferRegion
from rvm.tir.stmt_functor import StmtExprVisitor, post_order_visit, substitute


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
        """The Range ``index`` covers in a dimension of extent ``dim``: the whole dimension
        when ``index`` has more than ``MAX_INDEX_NODES`` nodes (an index computed by
        producers inlined into it, which simplifying would take long to no use)."""
        if _larger_than(index, MAX_INDEX_NODES):
            return Range.from_min_extent(_op.const(0, dim.dtype), dim)
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


#: Nodes an index expression may have before its region is the whole dimension.
MAX_INDEX_NODES = 256


class _TooLarge(Exception):
    pass


def _larger_than(expr, limit):
    """Whether ``expr`` has more than ``limit`` nodes (counted as a tree, stopping there)."""
    seen = [0]

    def count(_):
        seen[0] += 1
        if seen[0] > limit:
            raise _TooLarge

    try:
        post_order_visit(expr, count)
    except _TooLarge:
        return True
    return False


#: Distinct bounds one dimension of a merged region keeps. Past it the dimension is
#: widened to the constant bounds of its accesses (the buffer's extent where they are
#: unknown), as TVM's int-set relaxation does: the region still covers every access and
#: its expression stays small (a large inlined kernel otherwise nests one ``min``/``max``
#: per access, and each merge simplifies the whole nest again).
MAX_BOUNDS = 8


class _Span:
    """The accesses of one buffer dimension merged so far: the distinct starts and ends
    none of the others provably covers, the region being ``[min(starts), max(ends))``;
    once widened, the constant bounds ``[low, high)`` instead (``high`` None: the
    dimension's end)."""

    def __init__(self, dim):
        self.dim = dim
        self.starts, self.ends = [], []
        self.wide = False
        self.low, self.high = 0, None  # used once wide

    def add(self, rng, analyzer):
        end = analyzer.simplify(_op.add(rng.min, rng.extent))
        if self.wide:
            self._widen([rng.min], [end], analyzer)
            return
        _keep(self.starts, rng.min, analyzer, lowest=True)
        _keep(self.ends, end, analyzer, lowest=False)
        if len(self.starts) > MAX_BOUNDS or len(self.ends) > MAX_BOUNDS:
            self.wide = True
            self.low, self.high = None, 0
            self._widen(self.starts, self.ends, analyzer)
            self.starts, self.ends = [], []

    def _widen(self, starts, ends, analyzer):
        """Merges the constant bounds of ``starts`` and ``ends`` into ``[low, high)``."""
        lows = [analyzer.const_int_bound(s)[0] for s in starts]
        highs = [analyzer.const_int_bound(e)[1] for e in ends]
        low = 0 if None in lows else max(min(lows), 0)
        self.low = low if self.low is None else min(self.low, low)
        if None in highs or self.high is None:
            self.high = None
        else:
            self.high = max([self.high] + highs)

    def range(self, analyzer):
        if self.wide:  # accesses in bounds start below the dimension's end
            lo = _op.min(_op.const(self.low, self.dim.dtype), self.dim)
            hi = self.dim if self.high is None else \
                _op.min(_op.const(self.high, self.dim.dtype), self.dim)
        else:
            lo = self.starts[0]
            for start in self.starts[1:]:
                lo = _op.min(lo, start)
            hi = self.ends[0]
            for end in self.ends[1:]:
                hi = _op.max(hi, end)
        lo = analyzer.simplify(lo)
        return Range.from_min_extent(lo, analyzer.simplify(_op.subtract(hi, lo)))


def _keep(bounds, bound, analyzer, lowest):
    """Adds ``bound`` to ``bounds`` (starts when ``lowest``, else ends) unless one there
    provably covers it; drops those it provably covers."""
    for other in bounds:
        if _covers(other, bound, analyzer, lowest):
            return
    bounds[:] = [b for b in bounds if not _covers(bound, b, analyzer, lowest)]
    bounds.append(bound)


def _covers(a, b, analyzer, lowest):
    """Whether the bound ``a`` provably covers ``b``: ``a <= b`` for starts, ``a >= b``
    for ends (equal bounds cover each other)."""
    if a is b:
        return True
    if not (_is_int(a.dtype) and _is_int(b.dtype)):
        return structural_equal(a, b, map_free_vars=False)
    diff = analyzer._linear(Sub(a, b))  # both are simplified: their linear forms cancel
    lo, hi = analyzer.const_int_bound(diff.to_expr())
    return (hi is not None and hi <= 0) if lowest else (lo is not None and lo >= 0)


def _union(ranges, dim, analyzer):
    """The Range covering every Range of ``ranges`` (accesses of a dimension of extent
    ``dim``)."""
    if all(structural_equal(r, ranges[0], map_free_vars=False) for r in ranges[1:]):
        return ranges[0]
    span = _Span(dim)
    for rng in ranges:
        span.add(rng, analyzer)
    return span.range(analyzer)


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
            return
        analyzer = self.relaxer.analyzer
        dims = entry[1]
        for k, (rng, dim) in enumerate(zip(ranges, buffer.shape)):
            if isinstance(dims[k], Range):
                if structural_equal(dims[k], rng, map_free_vars=False):
                    continue
                span = _Span(dim)
                span.add(dims[k], analyzer)
                dims[k] = span
            dims[k].add(rng, analyzer)

    def regions(self, table):
        """``[(buffer, [Range])]`` of the accesses merged into ``table``."""
        analyzer = self.relaxer.analyzer
        return [(buffer, [d if isinstance(d, Range) else d.range(analyzer) for d in dims])
                for buffer, dims in table.values()]

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
                    ranges.append(_union([r_lo, r_hi], dim, self.relaxer.analyzer))
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
    writes = [BufferRegion(b, r) for b, r in collector.regions(collector.writes)]
    written = {id(b) for b, _ in collector.writes.values()}
    reads = [BufferRegion(b, r) for b, r in collector.regions(collector.reads)
             if not (block.init is not None and id(b) in written)]
    return reads, writes
