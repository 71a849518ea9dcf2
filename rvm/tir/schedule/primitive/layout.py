"""transform_layout: store a buffer in another layout, e.g. pre-packed weights.

    sch.transform_layout(block, ("read", 1), lambda j, k: (j // 16, k, j % 16))

rewrites every access ``W[j, k]`` to ``W[j // 16, k, j % 16]`` and gives W the
shape the map covers. The map must be a bijection of the buffer's elements
(checked by evaluating it on every index of constant-shaped buffers); a buffer with a
symbolic dimension takes only a permutation of its dimensions.
"""
import numpy as np

from rvm.tir import op as _op
from rvm.tir.analysis.block_access import get_block_read_write_region
from rvm.tir.analysis.index_eval import GRID_LIMIT, is_injective_on_grid
from rvm.tir.arith import Analyzer
from rvm.tir.buffer import Buffer
from rvm.tir.expr import BufferLoad, IntImm, Range
from rvm.tir.index_map import IndexMap
from rvm.tir.stmt import BufferStore
from rvm.tir.stmt_functor import StmtExprMutator, StmtExprVisitor

_CHECK_LIMIT = GRID_LIMIT


class _Relayout(StmtExprMutator):
    def __init__(self, old, new, index_map):
        self.old, self.new, self.map = old, new, index_map
        self.reuse = {}
        self.hit = False

    def visit_buffer_load_(self, op):
        op = self._generic(op)
        if op.buffer is self.old:
            self.hit = True
            return BufferLoad(self.new, self.map.map_indices(op.indices))
        return op

    def visit_buffer_store_(self, op):
        op = self._generic(op)
        if op.buffer is self.old:
            self.hit = True
            return BufferStore(self.new, op.value, self.map.map_indices(op.indices))
        return op

    def visit_block_(self, op):
        outer, self.hit = self.hit, False
        new = self._generic(op)
        changes = {}
        if any(r.buffer is self.old for r in new.reads + new.writes):
            reads, writes = get_block_read_write_region(new)
            fresh = {"reads": [r for r in reads if r.buffer is self.new],
                     "writes": [r for r in writes if r.buffer is self.new]}
            for key in ("reads", "writes"):
                regions = []
                for r in getattr(new, key):
                    if r.buffer is not self.old:
                        regions.append(r)
                    elif fresh[key]:
                        regions.append(fresh[key].pop(0))
                changes[key] = tuple(regions + fresh[key])
        if any(b is self.old for b in new.alloc_buffers):
            changes["alloc_buffers"] = tuple(self.new if b is self.old else b
                                             for b in new.alloc_buffers)
        if any(m.source.buffer is self.old for m in new.match_buffers):
            raise ValueError(f"buffer {self.old.name} is matched by block {op.name_hint!r}")
        self.hit = outer
        if changes:
            new = new.with_fields(**changes)
        if new is not op:
            self.reuse[op] = new
        return new


def _permuted_shape(old, index_map):
    """The shape of ``old`` under ``index_map`` when the map permutes its dimensions (each
    final index one distinct initial index: a bijection whatever the extents, symbolic ones
    too), else None."""
    positions = {id(var): k for k, var in enumerate(index_map.initial_indices)}
    order = [positions.get(id(expr)) for expr in index_map.final_indices]
    if None in order or sorted(order) != list(range(len(old.shape))):
        return None
    return [old.shape[k] for k in order]


class LayoutTransformation:
    """Schedule methods changing buffer layouts."""

    def transform_layout(self, block, buffer, index_map, pad_value=None,
                         assume_injective_transform=False):
        """Re-lays out ``buffer`` (``("read", i)``/``("write", i)`` of ``block``, or a buffer
        name) by ``index_map`` (an IndexMap or a function of the indices): every access
        ``B[idx]`` becomes ``B[index_map(idx)]`` and the shape becomes what the map covers."""
        name = "transform_layout"
        sref = self._block(block, name)
        old = self._find_buffer(sref, buffer)
        if pad_value is not None:
            raise self._error(name, "padding (pad_value) is not supported: the map must be a "
                              "bijection of the buffer's elements", sref)
        dtype = old.shape[0].dtype if old.shape else "int32"
        if not isinstance(index_map, IndexMap):
            index_map = IndexMap.from_func(index_map, ndim=len(old.shape), index_dtype=dtype)
        if index_map.ndim != len(old.shape):
            raise self._error(name, "the index map must take one index per buffer dimension",
                              sref, f"buffer {old.name} has {len(old.shape)} dimensions, the "
                              f"map takes {index_map.ndim}")
        index_map = index_map.with_dtype(dtype)
        shape = _permuted_shape(old, index_map)
        if shape is None:
            if not all(isinstance(d, IntImm) for d in old.shape):
                raise self._error(name, "the buffer's shape must be constant (or the map a "
                                  "permutation of its dimensions)", sref,
                                  f"buffer {old.name} has shape {list(old.shape)!r}")
            shape = self._mapped_shape(name, sref, old, index_map, assume_injective_transform)
        new = Buffer(old.data, old.dtype, shape, name=old.name, scope=old.scope)
        func = self.state.func(sref.func_name)
        root = self.state.roots[sref.func_name]
        rewriter = _Relayout(old, new, index_map)
        try:
            final = rewriter.visit(root.stmt)
        except ValueError as err:
            raise self._error(name, "the buffer must not be matched by a block", sref,
                              str(err)) from None
        buffer_map = {p: (new if b is old else b) for p, b in func.buffer_map.items()}
        reuse = dict(rewriter.reuse)
        self._replace(sref, {root.realize: root.realize.with_fields(block=final)}, reuse,
                      buffer_map=buffer_map)
        self._record("TransformLayout", [block],
                     [buffer, index_map, pad_value, assume_injective_transform], None)

    def _find_buffer(self, sref, buffer):
        blk = sref.stmt
        if isinstance(buffer, tuple):
            kind, index = buffer if len(buffer) == 2 else (None, None)
            regions = {"read": blk.reads, "write": blk.writes}.get(kind)
            if regions is None or not isinstance(index, int) or not 0 <= index < len(regions):
                raise self._error("transform_layout", 'buffer must be ("read", i) or ("write", '
                                  "i) indexing the block's accesses, or a buffer name", sref,
                                  f"got {buffer!r}")
            return regions[index].buffer
        if isinstance(buffer, Buffer):
            return buffer
        if isinstance(buffer, str):
            found = {}

            class _Find(StmtExprVisitor):
                def visit_buffer(self, b):
                    if b.name == buffer:
                        found[id(b)] = b

            func = self.state.func(sref.func_name)
            _Find().visit(func.body)
            for b in func.buffer_map.values():
                if b.name == buffer:
                    found[id(b)] = b
            if len(found) != 1:
                raise self._error("transform_layout", "the buffer name must name exactly one "
                                  "buffer of the function", sref,
                                  f"{len(found)} buffers are named {buffer!r}")
            return next(iter(found.values()))
        raise TypeError(f"transform_layout: buffer must be a (kind, index) tuple, a name or a "
                        f"Buffer, got {type(buffer).__name__}")

    def _mapped_shape(self, name, sref, old, index_map, assume_injective):
        ana = Analyzer()
        for var, dim in zip(index_map.initial_indices, old.shape):
            ana.bind(var, Range.from_min_extent(_op.const(0, dim.dtype), dim))
        shape = []
        for expr in index_map.final_indices:
            lo, hi = ana.const_int_bound(ana.simplify(expr))
            if lo is None or hi is None or lo < 0:
                raise self._error(name, "every mapped index must have constant non-negative "
                                  "bounds", sref, f"index {expr!r} has bounds [{lo}, {hi}]")
            shape.append(hi + 1)
        size = int(np.prod([d.value for d in old.shape], dtype=np.int64))
        new_size = int(np.prod(shape, dtype=np.int64))
        if new_size != size:
            raise self._error(name, "the index map must be a bijection of the buffer's elements "
                              "(no padding)", sref, f"{size} elements map into a shape "
                              f"{shape} of {new_size}")
        if size <= _CHECK_LIMIT and not assume_injective:
            axes = list(zip(index_map.initial_indices, [d.value for d in old.shape]))
            if not is_injective_on_grid(index_map.final_indices, axes):
                raise self._error(name, "the index map must be a bijection of the buffer's "
                                  "elements: two indices map to one element", sref)
        return [_op.const(d, old.shape[0].dtype) for d in shape]
