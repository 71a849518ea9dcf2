"""Features of a scheduled kernel for the cost model, read from its lowered loop nest.

Every store ``buf[index] = value`` of the lowered kernel is described by the
loops around it (trip count, the extents of its parallel, vectorized and
unrolled loops, the innermost loop), the arithmetic it does and how it walks
memory: for each access, the stride along the innermost loop, and for the
store as a whole the bytes its loops touch and how many bytes must come from
beyond each cache level (a footprint that fits the cache is loaded once per
iteration of the loops outside it). A candidate's vector is the
flop-weighted mean of its stores' vectors followed by whole-kernel figures.
Counts are on a log2(1 + x) scale.

>>> from rvm.meta_schedule.feature_extractor.per_store_feature import FEATURE_NAMES
>>> len(FEATURE_NAMES) > 20
True
"""
import math

import numpy as np

from rvm.tir import expr as E
from rvm.tir import stmt as S
from rvm.tir.function import PrimFunc
from rvm.tir.stmt import ForKind

CACHE_BYTES = (32 * 1024, 1024 * 1024)  # L1, L2 of a typical core
STORE_FEATURES = (
    "trips", "float_add", "float_mul", "float_div", "float_minmax", "float_math", "int_ops",
    "compare_select", "loop_depth", "inner_extent", "inner_vectorized", "vector_lanes",
    "unroll_product", "unrolled_loops", "parallel_extent", "parallel_balance",
    "inner_contiguous", "inner_strided", "inner_reused", "store_local", "store_scalar",
    "bytes_touched", "bytes_from_l2", "bytes_from_memory", "reuse_ratio", "arith_intensity",
)
KERNEL_FEATURES = ("total_flops", "num_stores", "num_loops", "local_bytes", "parallel_loops",
                   "serial_outer_extent")
FEATURE_NAMES = tuple(f"store.{n}" for n in STORE_FEATURES) + tuple(
    f"kernel.{n}" for n in KERNEL_FEATURES)


def _log(x):
    return math.log2(1.0 + max(0.0, float(x)))


def _extent(loop):
    return loop.extent.value if isinstance(loop.extent, E.IntImm) else 1


class _Ops:
    """Counts of the operations in an expression, by kind."""

    def __init__(self):
        self.counts = dict.fromkeys(("float_add", "float_mul", "float_div", "float_minmax",
                                     "float_math", "int_ops", "compare_select"), 0)
        self.loads = []

    def visit(self, e):
        if isinstance(e, E.BufferLoad):
            self.loads.append(e)
            for i in e.indices:
                self.visit(i)
            return
        if isinstance(e, E.BinaryOpExpr):
            is_float = e.dtype.is_float
            kind = type(e)
            if isinstance(e, E.CmpExpr):
                self.counts["compare_select"] += 1
            elif not is_float:
                self.counts["int_ops"] += 1
            elif kind in (E.Add, E.Sub):
                self.counts["float_add"] += 1
            elif kind is E.Mul:
                self.counts["float_mul"] += 1
            elif kind in (E.Div, E.Mod, E.FloorDiv, E.FloorMod):
                self.counts["float_div"] += 1
            elif kind in (E.Min, E.Max):
                self.counts["float_minmax"] += 1
            self.visit(e.a)
            self.visit(e.b)
        elif isinstance(e, (E.Select, E.Not)):
            self.counts["compare_select"] += 1
            for name in e._fields:
                self._visit_field(getattr(e, name))
        elif isinstance(e, E.Call):
            if e.dtype.is_float:
                self.counts["float_math"] += 1
            for a in e.args:
                self._visit_field(a)
        elif isinstance(e, (E.Cast, E.Let)):
            for name in e._fields:
                self._visit_field(getattr(e, name))

    def _visit_field(self, value):
        if isinstance(value, E.PrimExprWithOp):
            self.visit(value)


def _coefficients(index, loop_ids):
    """{id(loop var): coefficient} of ``index`` for loop variables; a variable under a
    non-linear operation gets coefficient 1 (it moves the address, by an unknown step)."""
    coeffs = {}

    def walk(e, scale):
        if isinstance(e, E.Var):
            if id(e) in loop_ids:
                coeffs[id(e)] = coeffs.get(id(e), 0) + scale
        elif isinstance(e, (E.Add, E.Sub)):
            walk(e.a, scale)
            walk(e.b, -scale if isinstance(e, E.Sub) else scale)
        elif isinstance(e, E.Mul) and isinstance(e.b, E.IntImm):
            walk(e.a, scale * e.b.value)
        elif isinstance(e, E.Mul) and isinstance(e.a, E.IntImm):
            walk(e.b, scale * e.a.value)
        elif isinstance(e, E.Cast):
            walk(e.value, scale)
        elif isinstance(e, E.PrimExprWithOp):
            for name in e._fields:
                value = getattr(e, name)
                if isinstance(value, E.PrimExprWithOp):
                    walk(value, 1 if scale else 0)

    walk(index, 1)
    return coeffs


class _Access:
    def __init__(self, buffer, index, loops):
        loop_ids = {id(loop.loop_var) for loop in loops}
        self.coeffs = _coefficients(index, loop_ids)
        self.itemsize = buffer.dtype.itemsize
        self.size = 1
        for dim in buffer.shape:
            self.size *= dim.value if isinstance(dim, E.IntImm) else 1 << 20

    def footprint(self, loops):
        """Elements touched over ``loops`` (capped by the buffer's size)."""
        count = 1
        for loop in loops:
            if self.coeffs.get(id(loop.loop_var), 0) != 0:
                count *= _extent(loop)
        return min(count, self.size)


class _StoreFeatures:
    """Walks a lowered PrimFunc, one feature row per BufferStore."""

    def __init__(self, num_cores):
        self.num_cores = max(1, num_cores)
        self.rows = []
        self.weights = []
        self.local_bytes = 0
        self.local_buffers = set()
        self.num_loops = 0
        self.parallel_loops = 0
        self.serial_outer = 1

    def visit(self, stmt, loops):
        if isinstance(stmt, S.For):
            self.num_loops += 1
            if stmt.kind == ForKind.PARALLEL:
                self.parallel_loops += 1
            elif not loops:
                self.serial_outer = max(self.serial_outer, _extent(stmt))
            self.visit(stmt.body, loops + [stmt])
        elif isinstance(stmt, S.BufferStore):
            self.store(stmt, loops)
        elif isinstance(stmt, S.SeqStmt):
            for s in stmt.seq:
                self.visit(s, loops)
        elif isinstance(stmt, S.Allocate):
            size = 1
            for e in stmt.extents:
                size *= e.value if isinstance(e, E.IntImm) else 1
            self.local_bytes += size * stmt.dtype.itemsize
            self.local_buffers.add(id(stmt.buffer_var))
            self.visit(stmt.body, loops)
        elif isinstance(stmt, S.IfThenElse):
            self.visit(stmt.then_case, loops)
            if stmt.else_case is not None:
                self.visit(stmt.else_case, loops)
        elif isinstance(stmt, (S.LetStmt, S.AssertStmt, S.DeclBuffer, S.While)):
            self.visit(stmt.body, loops)

    def store(self, op, loops):
        ops = _Ops()
        ops.visit(op.value)
        for i in op.indices:
            ops.visit(i)
        trips = 1
        for loop in loops:
            trips *= _extent(loop)
        inner = loops[-1] if loops else None
        vector_lanes = unroll = parallel = 1
        unrolled = 0
        for loop in loops:
            if loop.kind == ForKind.VECTORIZED:
                vector_lanes *= _extent(loop)
            elif loop.kind == ForKind.UNROLLED:
                unroll *= _extent(loop)
                unrolled += 1
            elif loop.kind == ForKind.PARALLEL:
                parallel *= _extent(loop)
        accesses = [_Access(load.buffer, load.indices[0], loops) for load in ops.loads
                    if load.indices]
        store_access = _Access(op.buffer, op.indices[0], loops) if op.indices else None
        every = accesses + ([store_access] if store_access else [])
        strides = [a.coeffs.get(id(inner.loop_var), 0) if inner is not None else 0 for a in every]
        n = max(1, len(every))
        is_local = id(op.buffer.data) in self.local_buffers
        touched = sum(a.footprint(loops) * a.itemsize for a in every)
        from_cache = [self._bytes_beyond(every, loops, size) for size in CACHE_BYTES]
        flops = sum(ops.counts[k] for k in ("float_add", "float_mul", "float_div",
                                             "float_minmax", "float_math"))
        row = [
            _log(trips),
            *(_log(ops.counts[k] * trips) for k in ("float_add", "float_mul", "float_div",
                                                     "float_minmax", "float_math", "int_ops",
                                                     "compare_select")),
            len(loops),
            _log(_extent(inner) if inner is not None else 1),
            float(inner is not None and inner.kind == ForKind.VECTORIZED),
            _log(vector_lanes),
            _log(unroll),
            unrolled,
            _log(parallel),
            (min(parallel, self.num_cores) / self.num_cores) if parallel > 1 else 0.0,
            sum(1 for s in strides if abs(s) == 1) / n,
            sum(1 for s in strides if abs(s) > 1) / n,
            sum(1 for s in strides if s == 0) / n,
            float(is_local),
            float(is_local and (store_access is None or store_access.size == 1)),
            _log(touched),
            _log(from_cache[0]),
            _log(from_cache[1]),
            _log(trips * n / max(1.0, touched / 4.0)),
            _log(flops * trips / max(1.0, from_cache[0])),
        ]
        self.rows.append(row)
        self.weights.append(max(1.0, flops * trips))

    @staticmethod
    def _bytes_beyond(accesses, loops, cache_bytes):
        """Bytes loaded from beyond a cache of ``cache_bytes``: the footprint of the
        innermost loops that fits, once per iteration of the loops outside them."""
        level = len(loops)
        footprint = sum(a.footprint([]) * a.itemsize for a in accesses)
        while level > 0:
            inner = sum(a.footprint(loops[level - 1:]) * a.itemsize for a in accesses)
            if inner > cache_bytes:
                break
            level -= 1
            footprint = inner
        outer_trips = 1
        for loop in loops[:level]:
            outer_trips *= _extent(loop)
        return footprint * outer_trips


def features_of_lowered(func, num_cores=1):
    """The feature vector (numpy float32, len(FEATURE_NAMES)) of a lowered PrimFunc."""
    if not isinstance(func, PrimFunc):
        raise TypeError(f"expected a lowered PrimFunc, got {type(func).__name__}")
    walker = _StoreFeatures(num_cores)
    walker.visit(func.body, [])
    if walker.rows:
        weights = np.asarray(walker.weights)
        store = (np.asarray(walker.rows) * (weights / weights.sum())[:, None]).sum(axis=0)
        total_flops = float(weights.sum())
    else:
        store = np.zeros(len(STORE_FEATURES))
        total_flops = 0.0
    kernel = [_log(total_flops), len(walker.rows), walker.num_loops, _log(walker.local_bytes),
              walker.parallel_loops, _log(walker.serial_outer)]
    return np.concatenate([store, np.asarray(kernel, dtype=float)]).astype("float32")


def count_flops(func):
    """Floating-point operations one call of a lowered PrimFunc performs (TVM's FLOP column)."""
    walker = _StoreFeatures(1)
    walker.visit(func.body, [])
    # Weights are max(1, flops * trips): stores without float work count as 1 each.
    total = 0.0
    for row, weight in zip(walker.rows, walker.weights):
        total += weight if any(row[1:6]) else 0.0
    return int(total)
