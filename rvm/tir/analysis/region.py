"""Regions of buffers covered by index expressions when some variables range over intervals.

>>> from rvm.tir.expr import Var, Range
>>> from rvm.tir.arith import Analyzer
>>> i0, i1 = Var("i0"), Var("i1")
>>> relax_range(Range.from_min_extent(i0 * 4 + i1, 1), {id(i1): Range(0, 4)}, Analyzer())
Range(min=i0 * 4, extent=4)
"""
from rvm.ir.expr import PrimExpr
from rvm.tir import op as _op
from rvm.tir.arith import simplify
from rvm.tir.expr import (
    Add, BinaryOpExpr, BufferLoad, Cast, FloorDiv, FloorMod, IntImm, Max, Min, Mul, Range,
    SizeVar, Sub, Var,
)
from rvm.tir.free_vars import used_vars
from rvm.tir.stmt import BufferRegion


def buffer_subscript(buffer, indices):
    """``buffer[indices]``: a BufferLoad; where indices mix points and slices, the
    BufferRegion they cover (extents simplified)."""
    if not isinstance(indices, tuple):
        indices = (indices,)
    if not any(isinstance(i, slice) for i in indices):
        return BufferLoad(buffer, buffer._indices(indices))
    region = []
    for k, index in enumerate(indices):
        dim = buffer.shape[k]
        if isinstance(index, slice):
            if index.step not in (None, 1):
                raise ValueError(f"buffer regions need unit steps, got {index}")
            start = 0 if index.start is None else index.start
            stop = dim if index.stop is None else index.stop
            start, stop = _op.match_dtypes(start, stop)
            region.append(Range.from_min_extent(start, simplify(_op.subtract(stop, start))))
        else:
            index = _op.convert(index, dim.dtype)
            region.append(Range.from_min_extent(index, _op.const(1, index.dtype)))
    return BufferRegion(buffer, region)


def relax_bounds(expr, ranges, analyzer, memo=None):
    """(lower, upper) inclusive bounds of an integer expression when the variables in
    ``ranges`` ({id(var): Range}) take any value of their range; None if unknown.

    ``memo`` (a dict, empty at first) lets calls with the same ``ranges`` and analyzer
    share the bounds of the subexpressions they have in common."""
    if memo is None:
        memo = {}
    key = id(expr)
    found = memo.get(key)
    if found is None:
        found = memo[key] = (expr, _relax_bounds(expr, ranges, analyzer, memo))
    return found[1]


def _relax_bounds(expr, ranges, analyzer, memo):
    if not isinstance(expr, PrimExpr):
        return None
    if not _var_ids(expr, memo) & ranges.keys():
        return expr, expr
    if isinstance(expr, Var):
        rng = ranges[id(expr)]
        return rng.min, _op.subtract(_op.add(rng.min, rng.extent), 1)
    if isinstance(expr, Cast):
        inner = relax_bounds(expr.value, ranges, analyzer, memo)
        return None if inner is None else tuple(_op.cast(b, expr.dtype) for b in inner)
    if isinstance(expr, (Add, Sub)):
        a = relax_bounds(expr.a, ranges, analyzer, memo)
        b = relax_bounds(expr.b, ranges, analyzer, memo)
        if a is None or b is None:
            return None
        if isinstance(expr, Add):
            return _op.add(a[0], b[0]), _op.add(a[1], b[1])
        return _op.subtract(a[0], b[1]), _op.subtract(a[1], b[0])
    if isinstance(expr, Mul):
        for x, c in ((expr.a, expr.b), (expr.b, expr.a)):
            if isinstance(c, IntImm):
                inner = relax_bounds(x, ranges, analyzer, memo)
                if inner is None:
                    return None
                lo, hi = _op.multiply(inner[0], c), _op.multiply(inner[1], c)
                return (lo, hi) if c.value >= 0 else (hi, lo)
        return None
    if isinstance(expr, (FloorDiv, FloorMod)) and isinstance(expr.b, IntImm) \
            and expr.b.value > 0:
        inner = relax_bounds(expr.a, ranges, analyzer, memo)
        if inner is None:
            return None
        lo_q = analyzer.simplify(_op.floordiv(inner[0], expr.b))
        hi_q = analyzer.simplify(_op.floordiv(inner[1], expr.b))
        if isinstance(expr, FloorDiv):
            return lo_q, hi_q
        if analyzer.can_prove_equal(lo_q, hi_q):
            return (analyzer.simplify(_op.floormod(inner[0], expr.b)),
                    analyzer.simplify(_op.floormod(inner[1], expr.b)))
        return _op.const(0, expr.dtype), _op.const(expr.b.value - 1, expr.dtype)
    if isinstance(expr, (Min, Max)):
        a = relax_bounds(expr.a, ranges, analyzer, memo)
        b = relax_bounds(expr.b, ranges, analyzer, memo)
        if a is None or b is None:
            return None
        pick = _op.min if isinstance(expr, Min) else _op.max
        return pick(a[0], b[0]), pick(a[1], b[1])
    return None


def _var_ids(expr, memo):
    """The ids of the variables ``expr`` uses (``used_vars``), sharing ``memo`` with the
    bounds (under the key ``("vars", id(expr))``)."""
    key = ("vars", id(expr))
    found = memo.get(key)
    if found is not None:
        return found[1]
    kind = type(expr)
    if kind is Var or kind is SizeVar:
        ids = {id(expr)}
    elif kind is IntImm:
        ids = set()
    elif kind is Cast:
        ids = _var_ids(expr.value, memo)
    elif isinstance(expr, BinaryOpExpr):
        ids = _var_ids(expr.a, memo) | _var_ids(expr.b, memo)
    else:
        ids = used_vars(expr).keys()
    memo[key] = (expr, ids)
    return ids


def relax_range(rng, ranges, analyzer):
    """The Range covered by ``rng`` (a Range of indices) over the relaxed variables, or None."""
    memo = {}  # the last index holds the first: its bounds are computed once
    lo = relax_bounds(rng.min, ranges, analyzer, memo)
    last = _op.subtract(_op.add(rng.min, rng.extent), 1)
    hi = relax_bounds(last, ranges, analyzer, memo)
    if lo is None or hi is None:
        return None
    start = analyzer.simplify(lo[0])
    extent = analyzer.simplify(_op.add(_op.subtract(hi[1], start), 1))
    return Range.from_min_extent(start, extent)


def union_ranges(a, b, analyzer):
    """The bounding box of two lists of Ranges."""
    out = []
    for ra, rb in zip(a, b):
        if analyzer.can_prove_equal(ra.min, rb.min) and \
                analyzer.can_prove_equal(ra.extent, rb.extent):
            out.append(ra)
            continue
        lo = analyzer.simplify(_op.min(ra.min, rb.min))
        hi = analyzer.simplify(_op.max(_op.add(ra.min, ra.extent), _op.add(rb.min, rb.extent)))
        out.append(Range.from_min_extent(lo, analyzer.simplify(_op.subtract(hi, lo))))
    return out




def covers(outer, inner, analyzer):
    """Whether the Ranges ``outer`` provably contain the Ranges ``inner``, dimension by
    dimension."""
    for o, i in zip(outer, inner):
        if not analyzer.can_prove(_op.greater_equal(i.min, o.min)):
            return False
        if not analyzer.can_prove(_op.less_equal(_op.add(i.min, i.extent),
                                                 _op.add(o.min, o.extent))):
            return False
    return True
