"""PlanAndUpdateBufferAllocationLocation: allocate each buffer at the innermost loop holding
all its accesses, so an intermediate used only inside a ``parallel`` loop is private to
each iteration (one array per thread in C, not one shared by the threads).

Runs on lowered loop nests (after LowerOpaqueBlock), where a block's ``alloc_buffer``
is an ``Allocate`` + ``DeclBuffer`` around the block's statements: a schedule keeps
every intermediate at the root block, even a register tile computed under the
tile loops.

    C_local = T.allocate([4096], ...)          for i_0 in T.parallel(16):
    for i_0 in T.parallel(16):        ->           C_local = T.allocate([4096], ...)
        ... C_local[...] ...                       ... C_local[...] ...

An allocation moves into a loop only when, in each iteration, every read is of
elements an earlier statement of the same iteration wrote (provably, from the
accessed regions): a buffer carrying values from one iteration to the next stays
outside.
"""
from rvm.ir.expr import PrimExpr
from rvm.tir.analysis.region import covers, relax_range, union_ranges
from rvm.tir.arith import Analyzer
from rvm.tir.buffer import Buffer
from rvm.tir.expr import Range
from rvm.tir.stmt import DeclBuffer
from rvm.tir.stmt_functor import StmtExprVisitor, StmtMutator
from rvm.transform.tir.prim_func_pass import prim_func_pass


class Access:
    """One load or store of a buffer: ``is_write``, ``indices`` and the loops around it
    (outermost first, inside the allocation)."""

    __slots__ = ("is_write", "indices", "loops")

    def __init__(self, is_write, indices, loops):
        self.is_write = is_write
        self.indices = indices
        self.loops = loops


class _Collector(StmtExprVisitor):
    def __init__(self, data):
        self.data = data
        self.loops = []
        self.accesses = []
        self.opaque = False

    def visit_for_(self, op):
        self.visit_expr(op.min)
        self.visit_expr(op.extent)
        self.loops.append(op)
        self.visit_stmt(op.body)
        self.loops.pop()

    def visit_buffer_load_(self, op):
        super().visit_buffer_load_(op)
        if op.buffer.data is self.data:
            self.accesses.append(Access(False, op.indices, tuple(self.loops)))

    def visit_buffer_store_(self, op):
        super().visit_buffer_store_(op)
        if op.buffer.data is self.data:
            self.accesses.append(Access(True, op.indices, tuple(self.loops)))

    def visit_var_(self, op):
        if op is self.data:
            self.opaque = True  # the pointer itself is used (a packed call, an address)

    def visit_call_(self, op):
        for arg in op.args:
            if isinstance(arg, Buffer) and arg.data is self.data:
                self.opaque = True
            elif isinstance(arg, PrimExpr):
                self.visit_expr(arg)


def collect_accesses(body, data):
    """The Accesses of the buffer over ``data`` in ``body``, or None when the buffer is also
    used as a whole (passed to a call), so its shape and place must stay."""
    collector = _Collector(data)
    collector.visit_stmt(body)
    return None if collector.opaque else collector.accesses


def access_regions(accesses, depth, analyzer):
    """The region (a list of Ranges) of each access in one iteration of the common loop at
    ``depth`` (loops deeper than it relaxed; -1 relaxes them all), or None when one cannot
    be bounded."""
    out = []
    for access in accesses:
        inner = access.loops[depth + 1:]
        ranges = {id(lp.loop_var): Range.from_min_extent(lp.min, lp.extent) for lp in inner}
        dims = []
        for index in access.indices:
            rng = relax_range(Range.from_min_extent(index, 1), ranges, analyzer)
            if rng is None:
                return None
            dims.append(rng)
        out.append(dims)
    return out


def bounding_box(regions, analyzer):
    """The bounding box of some regions (None for none)."""
    box = None
    for region in regions:
        box = region if box is None else union_ranges(box, region, analyzer)
    return box


def _written_before_read(accesses, regions, analyzer):
    """Whether every read is of elements written by accesses that come before it."""
    written = None
    for access, region in zip(accesses, regions):
        if access.is_write:
            written = region if written is None else union_ranges(written, region, analyzer)
        elif written is None or not covers(written, region, analyzer):
            return False
    return True


def _common_loops(accesses):
    if not accesses:
        return []
    common = list(accesses[0].loops)
    for access in accesses[1:]:
        k = 0
        while k < len(common) and k < len(access.loops) and common[k] is access.loops[k]:
            k += 1
        del common[k:]
    return common


def _target_loop(accesses):
    """The innermost common loop where each iteration reads only what it wrote, or None."""
    common = _common_loops(accesses)
    for depth in range(len(common) - 1, -1, -1):
        analyzer = Analyzer()
        for lp in common[:depth + 1]:
            analyzer.bind(lp.loop_var, Range.from_min_extent(lp.min, lp.extent))
        regions = access_regions(accesses, depth, analyzer)
        if regions is not None and _written_before_read(accesses, regions, analyzer):
            return common[depth]
    return None


class _Planner(StmtMutator):
    def visit_allocate_(self, op):
        op = self._generic(op)
        decl = op.body
        if not isinstance(decl, DeclBuffer) or decl.buffer.data is not op.buffer_var:
            return op
        accesses = collect_accesses(decl.body, op.buffer_var)
        if not accesses:
            return op
        loop = _target_loop(accesses)
        if loop is None:
            return op
        moved = op.with_fields(body=decl.with_fields(body=loop.body))
        return _swap(decl.body, loop, loop.with_fields(body=moved))


class _Swap(StmtMutator):
    def __init__(self, old, new):
        self.old, self.new = old, new

    def visit_for_(self, op):
        if op is self.old:
            return self.new
        return self._generic(op)


def _swap(root, old, new):
    return _Swap(old, new).visit_stmt(root)


def plan_buffer_allocation(func):
    """``func`` with each allocation moved into the innermost loop holding its accesses."""
    body = _Planner().visit(func.body)
    return func if body is func.body else func.with_body(body)


def PlanAndUpdateBufferAllocationLocation():  # noqa: N802  (passes are CamelCase factories)
    """The pass form of ``plan_buffer_allocation``."""
    return prim_func_pass(lambda f, mod, ctx: plan_buffer_allocation(f),
                          "PlanAndUpdateBufferAllocationLocation")
