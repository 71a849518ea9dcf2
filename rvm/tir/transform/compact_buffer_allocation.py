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
from rvm.tir.transform.plan_buffer_allocation import (
    access_regions, bounding_box, collect_all_accesses,
)
from rvm.tir.transform.prim_func_pass import prim_func_pass

# A symbolic dimension (a batch) shrinks to a constant extent below this: the bound of a
# region spanning the whole dimension is the shape variable's (its dtype's range).
SYMBOLIC_LIMIT = 1 << 30


class _Reindex(StmtExprMutator):
    """Rewrites the accesses of some buffers: ``{id(old): (new, starts)}``."""

    def __init__(self, mapping, analyzer):
        self.mapping, self.analyzer = mapping, analyzer

    def _index(self, indices, starts):
        return [self.analyzer.simplify(_op.subtract(i, s)) for i, s in zip(indices, starts)]

    def visit_buffer_load_(self, op):
        op = self._generic(op)
        found = self.mapping.get(id(op.buffer))
        if found is not None:
            return BufferLoad(found[0], self._index(op.indices, found[1]))
        return op

    def visit_buffer_store_(self, op):
        op = self._generic(op)
        found = self.mapping.get(id(op.buffer))
        if found is not None:
            return BufferStore(found[0], op.value, self._index(op.indices, found[1]))
        return op


class _Compactor(StmtMutator):
    """Compacts a chain of allocations (``Allocate`` + ``DeclBuffer`` nested in one another,
    one per intermediate of a kernel) at once: the statements under the chain first,
    then the accesses of every buffer of the chain, collected in one walk and
    rewritten in one walk. Walking the chain without recursion keeps kernels with
    very many intermediates within Python's recursion limit, and linear in their
    size."""

    def __init__(self):
        self.analyzer = Analyzer()

    def visit_for_(self, op):
        self.analyzer.bind(op.loop_var, Range.from_min_extent(op.min, op.extent))
        return self._generic(op)

    def visit_allocate_(self, op):
        chain, node = [], op
        while isinstance(node, type(op)) and getattr(node.body, "buffer", None) is not None \
                and node.body.buffer.data is node.buffer_var:
            chain.append((node, node.body))
            node = node.body.body
        if not chain:
            return self._generic(op)
        core = self.visit_stmt(node)
        found = collect_all_accesses(core, [a.buffer_var for a, _ in chain])
        mapping, rebuilt = {}, []
        for alloc, decl in chain:
            new = self._compacted(decl.buffer, found[id(alloc.buffer_var)])
            if new is None:
                rebuilt.append((alloc, decl, None))
            else:
                mapping[id(decl.buffer)] = new
                rebuilt.append((alloc, decl, new[0]))
        if mapping:
            core = _Reindex(mapping, self.analyzer).visit(core)
        elif core is node:
            return op
        for alloc, decl, new in reversed(rebuilt):
            if new is None:
                core = alloc.with_fields(body=decl.with_fields(body=core))
            else:
                core = alloc.with_fields(extents=tuple(new.shape),
                                         body=decl.with_fields(buffer=new, body=core))
        return core

    def _compacted(self, buf, accesses):
        """``(the compacted buffer, the starts of its region)``, or None to keep ``buf``."""
        if buf.strides:
            return None
        if not accesses:
            return None
        regions = access_regions(accesses, -1, self.analyzer)
        if regions is None:
            return None
        box = bounding_box(regions, self.analyzer)
        shape, starts = [], []
        for rng, dim in zip(box, buf.shape):
            _, upper = self.analyzer.const_int_bound(rng.extent)
            if upper is None or (upper >= dim.value if isinstance(dim, IntImm)
                                 else upper >= SYMBOLIC_LIMIT):
                shape.append(dim)
                starts.append(_op.const(0, dim.dtype))
            else:
                shape.append(_op.const(max(upper, 1), dim.dtype))
                starts.append(_op.cast(rng.min, dim.dtype))
        if all(a is b for a, b in zip(shape, buf.shape)):
            return None
        return Buffer(buf.data, buf.dtype, shape, name=buf.name, scope=buf.scope), starts


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
