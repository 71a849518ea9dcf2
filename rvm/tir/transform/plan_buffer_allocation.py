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
from rvm.tir.transform.prim_func_pass import prim_func_pass


class Access:
    """One load or store of a buffer: ``is_write``, ``indices`` and the loops around it
    (outermost first, inside the allocation)."""

    __slots__ = ("is_write", "indices", "loops")

    def __init__(self, is_write, indices, loops):
        self.is_write = is_write
        self.indices = indices
        self.loops = loops


class _Collector(StmtExprVisitor):
    """The accesses of the buffers over some data variables, in one walk."""

    def __init__(self, datas):
        self.wanted = {id(d) for d in datas}
        self.loops = []
        self.accesses = {id(d): [] for d in datas}
        self.opaque = set()

    def visit_for_(self, op):
        self.visit_expr(op.min)
        self.visit_expr(op.extent)
        self.loops.append(op)
        self.visit_stmt(op.body)
        self.loops.pop()

    def visit_buffer_load_(self, op):
        super().visit_buffer_load_(op)
        if id(op.buffer.data) in self.wanted:
            self.accesses[id(op.buffer.data)].append(
                Access(False, op.indices, tuple(self.loops)))

    def visit_buffer_store_(self, op):
        super().visit_buffer_store_(op)
        if id(op.buffer.data) in self.wanted:
            self.accesses[id(op.buffer.data)].append(
                Access(True, op.indices, tuple(self.loops)))

    def visit_var_(self, op):
        if id(op) in self.wanted:
            self.opaque.add(id(op))  # the pointer itself is used (a packed call, an address)

    def visit_call_(self, op):
        for arg in op.args:
            if isinstance(arg, Buffer) and id(arg.data) in self.wanted:
                self.opaque.add(id(arg.data))
            elif isinstance(arg, PrimExpr):
                self.visit_expr(arg)


def collect_all_accesses(body, datas):
    """``{id(data): Accesses}`` of the buffers over ``datas`` in ``body`` (one walk); a
    buffer also used as a whole (passed to a call), whose shape and place must stay, maps
    to None."""
    collector = _Collector(datas)
    collector.visit_stmt(body)
    return {key: None if key in collector.opaque else found
            for key, found in collector.accesses.items()}


def collect_accesses(body, data):
    """The Accesses of the buffer over ``data`` in ``body``, or None when the buffer is also
    used as a whole (passed to a call), so its shape and place must stay."""
    return collect_all_accesses(body, [data])[id(data)]


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
    """Plans a chain of allocations (``Allocate`` + ``DeclBuffer`` nested in one another, one
    per intermediate of a kernel) at once: the statements under the chain are planned
    first, the accesses of every buffer of the chain are collected in one walk, then
    each allocation moves into its loop (those moving into the same loop keep their
    order). Walking the chain without recursion keeps kernels with very many
    intermediates within Python's recursion limit, and linear in their size."""

    def visit_allocate_(self, op):
        chain, node = [], op
        while isinstance(node, type(op)) and isinstance(node.body, DeclBuffer) and \
                node.body.buffer.data is node.buffer_var:
            chain.append((node, node.body))
            node = node.body.body
        if not chain:
            return self._generic(op)
        core = self.visit_stmt(node)
        found = collect_all_accesses(core, [a.buffer_var for a, _ in chain])
        targets, kept = {}, []
        for alloc, decl in chain:
            accesses = found[id(alloc.buffer_var)]
            loop = _target_loop(accesses) if accesses else None
            if loop is None:
                kept.append((alloc, decl))
            else:
                targets.setdefault(id(loop), []).append((alloc, decl))
        if targets:
            core = _Place(targets).visit_stmt(core)
        elif core is node:
            return op
        return _wrap(kept, core)


def _wrap(chain, body):
    for alloc, decl in reversed(chain):
        body = alloc.with_fields(body=decl.with_fields(body=body))
    return body


class _Place(StmtMutator):
    """Moves allocations into the bodies of their loops (``{id(loop): [(alloc, decl)]}``)."""

    def __init__(self, targets):
        self.targets = targets

    def visit_for_(self, op):
        chain = self.targets.get(id(op))
        op = self._generic(op)
        if chain is None:
            return op
        return op.with_fields(body=_wrap(chain, op.body))


def plan_buffer_allocation(func):
    """``func`` with each allocation moved into the innermost loop holding its accesses."""
    body = _Planner().visit(func.body)
    return func if body is func.body else func.with_body(body)


def PlanAndUpdateBufferAllocationLocation():  # noqa: N802  (passes are CamelCase factories)
    """The pass form of ``plan_buffer_allocation``."""
    return prim_func_pass(lambda f, mod, ctx: plan_buffer_allocation(f),
                          "PlanAndUpdateBufferAllocationLocation")
