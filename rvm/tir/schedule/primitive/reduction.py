"""Reduction primitives: decompose_reduction and rfactor.

decompose_reduction moves a reduction block's init into its own block, run
before a chosen loop; rfactor splits a reduction over one of its loops into
partial results kept in a new buffer, then reduces them in a write-back block.
"""
from rvm.tir import op as _op
from rvm.tir.analysis.block_access import get_block_read_write_region
from rvm.tir.buffer import decl_buffer
from rvm.tir.expr import (
    Add, And, BufferLoad, FloatImm, IntImm, IterVar, Max, Min, Mul, Range, Var,
)
from rvm.tir.schedule import analysis as _an
from rvm.tir.schedule.rv import BlockRV
from rvm.tir.schedule.state import replace_stmts
from rvm.tir.schedule.primitive.utils import is_zero
from rvm.tir.stmt import (
    Block, BlockRealize, BufferStore, For, ForKind, stmt_seq,
)
from rvm.tir.stmt_functor import substitute

_COMBINERS = {Add: ("add", _op.add), Mul: ("multiply", _op.multiply), Max: ("max", _op.max),
              Min: ("min", _op.min)}


def _identity(kind, dtype):
    if kind == Add:
        return _op.const(0, dtype)
    if kind == Mul:
        return _op.const(1, dtype)
    return _op.min_value(dtype) if kind == Max else _op.max_value(dtype)


def _conjuncts(expr):
    if isinstance(expr, And):
        return _conjuncts(expr.a) + _conjuncts(expr.b)
    return [expr]


def _fresh_iter(iv, suffix, iter_type=None):
    return IterVar(iv.dom, Var(iv.var.name_hint + suffix, iv.var.dtype),
                   iv.iter_type if iter_type is None else iter_type)


class Reduction:
    """Schedule methods restructuring reductions."""

    def decompose_reduction(self, block, loop):
        """Moves the init of reduction ``block`` into a new block "<name>_init" placed just
        before ``loop`` (which must enclose the block and every loop of its reduction axes);
        the block itself, now only the update, is renamed "<name>_update" as in TVM (its
        handle stays valid). Returns the init block."""
        sref = self._block(block, "decompose_reduction")
        loop_sref = self._loop(loop, "decompose_reduction")
        blk, realize = sref.stmt, sref.realize
        if blk.init is None:
            raise self._error("decompose_reduction", "the block has no init: it is not a "
                              "reduction block", sref)
        if not _an.is_reduction_block(blk):
            raise self._error("decompose_reduction", "the block must be a reduction block "
                              "(spatial and reduction axes, output indexed by spatial axes)",
                              sref)
        loops = _an.loops_of(sref)
        if not any(s is loop_sref for s in loops):
            raise self._error("decompose_reduction", "the loop must enclose the block (inside "
                              "the block's scope)", loop_sref, f'block "{blk.name_hint}"')
        inner = loops[[id(s) for s in loops].index(id(loop_sref)):]
        inner_ids = {id(s.stmt.loop_var) for s in inner}
        for s in loops:
            if id(s.stmt.loop_var) in inner_ids:
                continue
            if _an.loop_bound_iter_types(sref.realize, s.stmt.loop_var) & {IterVar.CommReduce}:
                raise self._error("decompose_reduction", "the loop must be above every loop "
                                  "bound to a reduction axis", loop_sref,
                                  f"{_an.describe(s)} is bound to a reduction axis and is "
                                  "outside it")
        spatial = [(iv, v) for iv, v in zip(blk.iter_vars, realize.iter_values)
                   if iv.iter_type == IterVar.DataPar]
        used = {}
        for _, value in spatial:
            used.update(_an.vars_in(value))
        copies = {}
        nest = []
        for s in inner:
            old = s.stmt
            if id(old.loop_var) in used:
                var = Var(old.loop_var.name_hint + "_init", old.loop_var.dtype)
                copies[id(old.loop_var)] = var
                nest.append(old.with_fields(loop_var=var))
        lookup = copies.get
        iters = [_fresh_iter(iv, "") for iv, _ in spatial]  # TVM keeps the names
        var_map = {id(iv.var): new.var for (iv, _), new in zip(spatial, iters)}
        init_body = substitute(blk.init, lambda v: var_map.get(id(v)))
        writes = [substitute(w, lambda v: var_map.get(id(v))) for w in blk.writes]
        init_block = Block(iters, [], writes, blk.name_hint + "_init", init_body)
        values = [substitute(v, lambda x: lookup(id(x))) for _, v in spatial]
        dropped = inner_ids - set(copies)
        predicate = True
        for cond in _conjuncts(realize.predicate):
            cond = substitute(cond, lambda x: lookup(id(x)))
            if not set(_an.vars_in(cond)) & dropped:
                predicate = _op.logical_and(predicate, cond) if predicate is not True else cond
        init_stmt = BlockRealize(values, predicate, init_block)
        for loop_ in reversed(nest):
            init_stmt = loop_.with_fields(body=init_stmt)
        update = blk.with_fields(init=None, name_hint=blk.name_hint + "_update")
        reads, _ = get_block_read_write_region(update)
        update = update.with_fields(reads=tuple(reads))
        new_loop = _replace_realize(loop_sref.stmt, realize, realize.with_fields(block=update))
        self._replace(sref, {loop_sref.stmt: stmt_seq(init_stmt, new_loop)}, {blk: update})
        init_sref = self.state.block_sref(init_block)
        rv = self._new_rv(BlockRV, init_sref)
        return self._record("DecomposeReduction", [block, loop], [], rv)

    def rfactor(self, loop, factor_axis):
        """Factorizes the reduction of the one block under ``loop`` (bound to reduction axes
        only): partial results over ``loop`` go to a new buffer (the loop's extent inserted as
        dimension ``factor_axis``) in block "<name>_rf", then a write-back block reduces them
        into the original output. Returns the rfactor block."""
        loop_sref = self._loop(loop, "rfactor")
        blocks = _an.blocks_under(self.state, loop_sref)
        if len(blocks) != 1:
            raise self._error("rfactor", "the loop must contain exactly one block", loop_sref,
                              f"it contains {len(blocks)}")
        sref = blocks[0]
        blk, realize = sref.stmt, sref.realize
        combiner, store, value = self._reduction_pattern(sref)
        loop_var = loop_sref.stmt.loop_var
        types = _an.loop_bound_iter_types(realize, loop_var)
        if types != {IterVar.CommReduce}:
            raise self._error("rfactor", "the loop must be bound to reduction axes only",
                              loop_sref, f'block "{blk.name_hint}"')
        if not is_zero(loop_sref.stmt.min):
            raise self._error("rfactor", "the loop must start at 0", loop_sref)
        _an.require_affine_binding("rfactor", sref)
        out = store.buffer
        ndim = len(out.shape)
        if not isinstance(factor_axis, int) or not -(ndim + 1) <= factor_axis <= ndim:
            raise self._error("rfactor", f"factor_axis must be in [{-(ndim + 1)}, {ndim}]",
                              loop_sref, f"got {factor_axis!r}")
        axis = factor_axis + ndim + 1 if factor_axis < 0 else factor_axis
        extent = loop_sref.stmt.extent
        shape = list(out.shape)
        shape.insert(axis, _op.cast(extent, shape[0].dtype if shape else extent.dtype))
        rf_buf = decl_buffer(shape, out.dtype, name=out.name + "_rf")
        loops = _an.loops_of(sref)
        # The rfactor block: spatial axes, the rf loop as a spatial axis, one reduction axis per
        # remaining reduction loop.
        rf_var = IterVar(Range.from_min_extent(loop_sref.stmt.min, extent),
                         Var("v" + loop_var.name_hint, loop_var.dtype), IterVar.DataPar)
        spatial = [(iv, v) for iv, v in zip(blk.iter_vars, realize.iter_values)
                   if iv.iter_type == IterVar.DataPar]
        reduce_loops = []
        for iv, v in zip(blk.iter_vars, realize.iter_values):
            if iv.iter_type == IterVar.CommReduce:
                for s in loops:
                    if id(s.stmt.loop_var) in _an.vars_in(v) and s.stmt.loop_var is not \
                            loop_var and not any(s is r for r in reduce_loops):
                        reduce_loops.append(s)
        red_vars = [IterVar(Range.from_min_extent(s.stmt.min, s.stmt.extent),
                            Var("v" + s.stmt.loop_var.name_hint, s.stmt.loop_var.dtype),
                            IterVar.CommReduce) for s in reduce_loops]
        loop_to_iter = {id(loop_var): rf_var.var}
        loop_to_iter.update({id(s.stmt.loop_var): iv.var for s, iv in zip(reduce_loops,
                                                                             red_vars)})
        body_map = {}
        for iv, v in zip(blk.iter_vars, realize.iter_values):
            if iv.iter_type == IterVar.CommReduce:
                body_map[id(iv.var)] = substitute(v, lambda x: loop_to_iter.get(id(x)))
        rf_index = list(store.indices)
        rf_index.insert(axis, _op.cast(rf_var.var, shape[axis].dtype))
        rf_load = BufferLoad(rf_buf, rf_index)
        rf_value = substitute(value, lambda x: body_map.get(id(x)))
        rf_block = Block([iv for iv, _ in spatial] + [rf_var] + red_vars, [], [],
                         blk.name_hint + "_rf", BufferStore(rf_buf, combiner(rf_load, rf_value),
                                                            rf_index),
                         init=BufferStore(rf_buf, _identity(type(store.value), out.dtype),
                                          rf_index))
        reads, writes = get_block_read_write_region(rf_block)
        rf_block = rf_block.with_fields(reads=tuple(reads), writes=tuple(writes))
        rf_realize = BlockRealize([v for _, v in spatial] + [loop_var] +
                                  [s.stmt.loop_var for s in reduce_loops],
                                  realize.predicate, rf_block)
        wb_stmt, wb_block = self._write_back(blk, realize, loops, loop_sref, spatial, rf_buf,
                                             axis, combiner, store)
        top = loops[0].stmt
        new_top = _replace_realize(top, realize, rf_realize)
        scope = _an.scope_of(sref)
        scope_block = scope.stmt
        new_scope = scope_block.with_fields(alloc_buffers=scope_block.alloc_buffers + (rf_buf,))
        new_scope = new_scope.with_fields(body=_swap(scope_block.body, top,
                                                     stmt_seq(new_top, wb_stmt)))
        table = {scope.realize: scope.realize.with_fields(block=new_scope)}
        self._replace(sref, table, {scope_block: new_scope, blk: wb_block})
        rv = self._new_rv(BlockRV, self.state.block_sref(rf_block))
        return self._record("RFactor", [loop], [factor_axis], rv)

    def _write_back(self, blk, realize, loops, loop_sref, spatial, rf_buf, axis, combiner,
                    store):
        used = {}
        for _, v in spatial:
            used.update(_an.vars_in(v))
        nest, copies = [], {}
        for s in loops:
            old = s.stmt
            if id(old.loop_var) in used or s is loop_sref:
                var = Var(old.loop_var.name_hint, old.loop_var.dtype)
                copies[id(old.loop_var)] = var
                nest.append(For(var, old.min, old.extent, ForKind.SERIAL, old.body))
        iters = [_fresh_iter(iv, "") for iv, _ in spatial]
        red = IterVar(Range.from_min_extent(loop_sref.stmt.min, loop_sref.stmt.extent),
                      Var("v" + loop_sref.stmt.loop_var.name_hint, loop_sref.stmt.loop_var.dtype),
                      IterVar.CommReduce)
        var_map = {id(iv.var): new.var for (iv, _), new in zip(spatial, iters)}
        index = [substitute(i, lambda v: var_map.get(id(v))) for i in store.indices]
        rf_index = list(index)
        rf_index.insert(axis, _op.cast(red.var, rf_buf.shape[axis].dtype))
        out_load = BufferLoad(store.buffer, index)
        wb = Block(iters + [red], [], [], blk.name_hint,
                   BufferStore(store.buffer, combiner(out_load, BufferLoad(rf_buf, rf_index)),
                               index),
                   init=BufferStore(store.buffer, _identity(type(store.value), rf_buf.dtype),
                                    index))
        reads, writes = get_block_read_write_region(wb)
        wb = wb.with_fields(reads=tuple(reads), writes=tuple(writes), annotations=blk.annotations)
        values = [substitute(v, lambda x: copies.get(id(x))) for _, v in spatial]
        stmt = BlockRealize(values + [copies[id(loop_sref.stmt.loop_var)]], True, wb)
        for loop_ in reversed(nest):
            stmt = loop_.with_fields(body=stmt)
        return stmt, wb

    def _reduction_pattern(self, sref):
        """(combiner builder, update store, value combined) of a recognised reduction block."""
        blk = sref.stmt
        if blk.init is None or not _an.is_reduction_block(blk):
            raise self._error("rfactor", "the block must be a reduction block with an init",
                              sref)
        store, init = blk.body, blk.init
        if not isinstance(store, BufferStore) or not isinstance(init, BufferStore) or \
                init.buffer is not store.buffer:
            raise self._error("rfactor", "the block's init and body must each be one store to "
                              "the reduction's output", sref)
        entry = _COMBINERS.get(type(store.value))
        value = None
        if entry is not None:
            for mine, other in ((store.value.a, store.value.b), (store.value.b, store.value.a)):
                if isinstance(mine, BufferLoad) and mine.buffer is store.buffer:
                    value = other
                    break
        if value is None:
            raise self._error("rfactor", "the block's body must combine its output with a value "
                              "by +, *, max or min (out = out + x)", sref)
        expected = _identity(type(store.value), store.buffer.dtype)
        if not isinstance(init.value, (IntImm, FloatImm)) or init.value.value != expected.value:
            raise self._error("rfactor", "the init value must be the identity of the combiner",
                              sref, f"init {init.value!r}, identity {expected!r}")
        return entry[1], store, value


def _swap(root, old, new):
    return replace_stmts(root, {old: new})


_replace_realize = _swap
