"""compute_inline / reverse_compute_inline: remove an intermediate buffer by substituting
its defining expression into its consumers (into its producer).

    B[vi] = A[vi] * 2.0          compute_inline(B)           C[vi] = A[vi] * 2.0 + 1.0
    C[vi] = B[vi] + 1.0                  ->

    B[vi] = A[vi] * 2.0          reverse_compute_inline(C)   C[vi] = A[vi] * 2.0 + 1.0
    C[vi] = B[vi] + 1.0                  ->                  (in the loops of B)
"""
import weakref

from rvm.tir.analysis.block_access import get_block_read_write_region
from rvm.tir.expr import Var
from rvm.tir.schedule import analysis as _an
from rvm.tir.schedule.state import REMOVE, replace_stmts
from rvm.tir.stmt import BufferStore
from rvm.tir.stmt_functor import StmtExprMutator, StmtExprVisitor, substitute


def _loads(node, buffer):
    found = []

    class _Find(StmtExprVisitor):
        def visit_buffer_load_(self, op):
            if op.buffer is buffer:
                found.append(op)
            super().visit_buffer_load_(op)

    _Find().visit(node)
    return found


# Block -> ids of the buffers loaded anywhere in it (nested blocks included). Nodes are
# immutable, so the set of a block holds while it lives; a block a primitive leaves as it
# is keeps its set across the primitives of a schedule.
_LOADED = weakref.WeakKeyDictionary()


def _loaded_buffers(block):
    """The ids of the buffers ``block`` loads (any field: body, init, regions, nested
    blocks), cached per block."""
    found = _LOADED.get(block)
    if found is None:
        ids = set()

        class _Collect(StmtExprVisitor):
            def visit_buffer_load_(self, op):
                ids.add(id(op.buffer))
                super().visit_buffer_load_(op)

            def visit_block_(self, op):
                if op is block:
                    super().visit_block_(op)
                else:
                    ids.update(_loaded_buffers(op))

        _Collect().visit_block_(block)
        found = _LOADED[block] = frozenset(ids)
    return found


class _Rewrite(StmtExprMutator):
    """Replaces loads of ``buffer`` by ``fn(load)``; a block whose own body had such loads gets
    its reads recomputed; ``drop`` is removed from alloc_buffers. A block that loads no
    element of ``buffer`` and does not allocate it is kept as it is without a visit."""

    def __init__(self, buffer, fn, drop):
        self.buffer = buffer
        self.fn = fn
        self.drop = drop
        self.reuse = {}
        self.hit = False

    def visit_buffer_load_(self, op):
        op = self._generic(op)
        if op.buffer is self.buffer:
            self.hit = True
            return self.fn(op)
        return op

    def visit_block_(self, op):
        if id(self.buffer) not in _loaded_buffers(op) and \
                not any(b is self.drop for b in op.alloc_buffers):
            return op
        outer, self.hit = self.hit, False
        new = self._generic(op)
        changes = {}
        if self.hit:
            reads, _ = get_block_read_write_region(new)
            changes["reads"] = tuple(reads)
        self.hit = outer
        if any(b is self.drop for b in new.alloc_buffers):
            changes["alloc_buffers"] = tuple(b for b in new.alloc_buffers if b is not self.drop)
        if changes:
            new = new.with_fields(**changes)
        if new is not op:
            self.reuse[op] = new
        return new


class ComputeInline:
    """Schedule methods inlining blocks."""

    def compute_inline(self, block):
        """Inlines ``block`` (``B[v...] = e``) into every reader of B and removes it."""
        sref = self._block(block, "compute_inline")
        store = self._inline_plan(sref)
        buffer = store.buffer
        axes = [i for i in store.indices]

        def inline(load):
            table = {id(v): idx for v, idx in zip(axes, load.indices)}
            return substitute(store.value, lambda v: table.get(id(v)))

        self._rewrite_function(sref, sref.realize, buffer, inline)
        self._record("ComputeInline", [block], [], None)

    def _inline_plan(self, sref):
        """The store of a block that compute_inline can inline (ScheduleError otherwise)."""
        name = "compute_inline"
        blk = sref.stmt
        if sref.parent is None:
            raise self._error(name, "the root block cannot be inlined", sref)
        if not _an.is_complete_block(blk):
            raise self._error(name, "the block must be a complete block (spatial axes only, no "
                              "init, no buffer both read and written)", sref)
        store = self._single_store(name, sref)
        self._require_intermediate(name, sref, store.buffer)
        axes = {id(iv.var) for iv in blk.iter_vars}
        if not all(isinstance(i, Var) and id(i) in axes for i in store.indices) or \
                len({id(i) for i in store.indices}) != len(store.indices):
            raise self._error(name, "the block must store at indices that are distinct block "
                              "axes (B[vi, vj] = ...)", sref,
                              f"indices {list(store.indices)!r}")
        covered = {id(i) for i in store.indices}
        used = _an.vars_in(store.value)
        if any(id(iv.var) in used and id(iv.var) not in covered for iv in blk.iter_vars):
            raise self._error(name, "the stored value uses a block axis that does not index "
                              "the output", sref)
        return store

    def reverse_compute_inline(self, block):
        """Inlines consumer ``block`` (``C[f(v)] = g(B[v])``) into the producer of B, which
        then computes C directly, and removes it."""
        name = "reverse_compute_inline"
        sref = self._block(block, name)
        blk = sref.stmt
        if sref.parent is None:
            raise self._error(name, "the root block cannot be inlined", sref)
        if not _an.is_complete_block(blk):
            raise self._error(name, "the block must be a complete block (spatial axes only, no "
                              "init, no buffer both read and written)", sref)
        store = self._single_store(name, sref)
        scope = _an.BlockScope(self.state, _an.scope_of(sref))
        producers = scope.producers(sref)
        if len(producers) != 1:
            raise self._error(name, "the block must have exactly one producer in its scope",
                              sref, f"it has {len(producers)}")
        prod = producers[0]
        if not _an.is_complete_block(prod.stmt):
            raise self._error(name, "the producer must be a complete block (not a reduction)",
                              prod)
        prod_store = self._single_store(name, prod)
        buffer = prod_store.buffer
        self._require_intermediate(name, prod, buffer)
        if len(scope.consumers(prod)) != 1:
            raise self._error(name, "the block must be the only consumer of its producer",
                              sref, f"buffer {buffer.name} has other readers")
        loads = _loads(store.value, buffer)
        axes = [iv.var for iv in blk.iter_vars]
        first = loads[0].indices if loads else ()
        if not loads or any(len(ld.indices) != len(first) or not all(
                a is b for a, b in zip(ld.indices, first)) for ld in loads) or \
                not all(isinstance(i, Var) for i in first) or \
                {id(i) for i in first} != {id(v) for v in axes} or len(first) != len(axes):
            raise self._error(name, "the block must read its producer's buffer at indices that "
                              "are exactly its axes, each once (C[...] = f(B[vi, vj]))", sref)
        if _loads(store.indices, buffer):
            raise self._error(name, "the block's output indices may not read the producer's "
                              "buffer", sref)
        table = {id(v): u for v, u in zip(first, prod_store.indices)}

        def rebase(expr):
            expr = substitute(expr, lambda v: table.get(id(v)))
            return _Rewrite(buffer, lambda ld: prod_store.value, None).visit(expr)

        new_store = BufferStore(store.buffer, rebase(store.value),
                                [rebase(i) for i in store.indices])
        old = prod.stmt
        new = old.with_fields(body=new_store)
        reads, writes = get_block_read_write_region(new)
        new = new.with_fields(reads=tuple(reads), writes=tuple(writes))
        root = self.state.roots[sref.func_name]
        table = {sref.realize: REMOVE, prod.realize: prod.realize.with_fields(block=new)}
        self._finish_rewrite(sref, root, table, buffer, None, {old: new})
        self._record("ReverseComputeInline", [block], [], None)

    def _single_store(self, name, sref):
        body = sref.stmt.body
        if not isinstance(body, BufferStore):
            raise self._error(name, "the block's body must be a single buffer store", sref)
        return body

    def _require_intermediate(self, name, sref, buffer):
        func = self.state.func(sref.func_name)
        if any(b is buffer for b in func.buffer_map.values()):
            raise self._error(name, "the block writes a function parameter (an output), which "
                              "must stay", sref, f"buffer {buffer.name}")
        scope = _an.BlockScope(self.state, _an.scope_of(sref))
        if len(scope.writers_of(buffer)) != 1:
            raise self._error(name, "the block must be the only writer of its output buffer",
                              sref, f"buffer {buffer.name}")
        if _loads(sref.stmt.body, buffer):
            raise self._error(name, "the block reads the buffer it writes", sref)

    def _rewrite_function(self, sref, remove, buffer, fn):
        root = self.state.roots[sref.func_name]
        self._finish_rewrite(sref, root, {remove: REMOVE}, buffer, fn, {})

    def _finish_rewrite(self, sref, root, table, buffer, fn, explicit):
        """Applies ``table`` to the function body, then replaces loads of ``buffer`` by
        ``fn(load)`` everywhere and drops its allocation, keeping block handles valid."""
        first = {}
        body = replace_stmts(root.stmt.body, table, first)
        first.update(explicit)
        mid_root = root.stmt.with_fields(body=body)
        first[root.stmt] = mid_root
        rewriter = _Rewrite(buffer, fn or (lambda ld: ld), buffer)
        final = rewriter.visit(mid_root)
        reuse = {old: rewriter.reuse.get(mid, mid) for old, mid in first.items()}
        mids = {id(m) for m in first.values()}
        for old, new in rewriter.reuse.items():
            if id(old) not in mids:
                reuse[old] = new
        self._replace(sref, {root.realize: root.realize.with_fields(block=final)}, reuse)
