"""compute_at / reverse_compute_at: move a block under a loop of its consumers (producers),
computing in each iteration exactly the region they use; and sample_compute_location.

    for i, j in T.grid(128, 128):                  for i in range(128):
        B[i, j] = ...            compute_at(B, i)        for ax0 in range(128):
    for i, j in T.grid(128, 128):       ->                  B[i, ax0] = ...
        C[i, j] = B[i, j]                              for j in range(128):
                                                           C[i, j] = B[i, j]
"""
from rvm.tir import op as _op
from rvm.tir.analysis.region import union_ranges
from rvm.tir.expr import IntImm, IterVar, Range, Var
from rvm.tir.schedule import analysis as _an
from rvm.tir.schedule.error import ScheduleError
from rvm.tir.schedule.primitive.utils import conjoin, is_zero
from rvm.tir.schedule.rv import INLINE_MARK, ROOT_MARK, LoopRV, _Mark
from rvm.tir.schedule.state import REMOVE, children_of
from rvm.tir.stmt import BlockRealize, For, ForKind, SeqStmt, stmt_seq


def _blocks_in(stmt):
    """ids of every Block inside ``stmt``."""
    found = set()

    def walk(node):
        if isinstance(node, BlockRealize):
            found.add(id(node.block))
        for child in children_of(node):
            walk(child)

    walk(stmt)
    return found


def _order(state, scope_sref):
    """{id(block or loop sref): pre-order position} inside a scope."""
    return {id(s): k for k, s in enumerate(state.srefs_of(scope_sref.func_name))}


class ComputeLocation:
    """Schedule methods moving blocks under other loops."""

    def compute_at(self, block, loop, preserve_unit_loops=False, index=-1):
        """Moves producer ``block`` under ``loop`` (which must enclose all its consumers),
        computing in each iteration the region the consumers read there."""
        if isinstance(loop, _Mark):
            self._at_mark(block, loop, "ComputeAt", preserve_unit_loops, index)
            return
        sref = self._block(block, "compute_at")
        loop_sref = self._loop(loop, "compute_at")
        plan = self._plan_at(sref, loop_sref, reverse=False, index=index)
        self._apply_at(sref, loop_sref, plan, preserve_unit_loops, "compute_at")
        self._record("ComputeAt", [block, loop], [preserve_unit_loops, index], None)

    def reverse_compute_at(self, block, loop, preserve_unit_loops=False, index=-1):
        """Moves consumer ``block`` under ``loop`` (which must enclose all its producers),
        consuming in each iteration the region the producers wrote there."""
        if isinstance(loop, _Mark):
            self._at_mark(block, loop, "ReverseComputeAt", preserve_unit_loops, index)
            return
        sref = self._block(block, "reverse_compute_at")
        loop_sref = self._loop(loop, "reverse_compute_at")
        plan = self._plan_at(sref, loop_sref, reverse=True, index=index)
        self._apply_at(sref, loop_sref, plan, preserve_unit_loops, "reverse_compute_at")
        self._record("ReverseComputeAt", [block, loop], [preserve_unit_loops, index], None)

    def _at_mark(self, block, mark, kind, preserve_unit_loops, index):
        if mark is INLINE_MARK:
            if kind == "ComputeAt":
                self.compute_inline(block)
            else:
                self.reverse_compute_inline(block)
            return
        self._block(block, kind)
        self._record(kind, [block, mark], [preserve_unit_loops, index], None)

    def sample_compute_location(self, block, decision=None):
        """A loop where ``block`` can be computed at, drawn uniformly among the legal ones,
        root (stay) and inline when legal; ``decision`` (-2 inline, -1 root, else an index into
        the legal loops, outermost first) fixes it."""
        sref = self._block(block, "sample_compute_location")
        candidates = self._compute_locations(sref)
        choices = [-1] + list(range(len(candidates)))
        if self._can_inline(sref):
            choices.insert(0, -2)
        if decision is None:
            decision = self._rng.choice(choices)
        elif decision not in choices:
            raise self._error("sample_compute_location", "the decision must name a legal "
                              "location", sref, f"decision {decision!r}, legal: {choices}")
        if decision == -2:
            rv = INLINE_MARK
        elif decision == -1:
            rv = ROOT_MARK
        else:
            rv = self._new_rv(LoopRV, candidates[decision])
        return self._record("SampleComputeLocation", [block], [], rv, decision)

    def _compute_locations(self, sref):
        scope = _an.BlockScope(self.state, _an.scope_of(sref))
        consumers = scope.consumers(sref)
        if not consumers:
            return []
        common = [s for s in _an.loops_of(consumers[0])
                  if all(_an.is_ancestor(s, c) for c in consumers)]
        out = []
        for loop_sref in common:
            try:
                self._plan_at(sref, loop_sref, reverse=False, index=-1)
            except ScheduleError:
                continue
            out.append(loop_sref)
        return out

    def _can_inline(self, sref):
        try:
            self._inline_plan(sref)
        except ScheduleError:
            return False
        return True

    # -- planning ------------------------------------------------------------------------
    def _plan_at(self, sref, loop_sref, reverse, index):
        name = "reverse_compute_at" if reverse else "compute_at"
        if sref.parent is None:
            raise self._error(name, "the root block cannot be moved", sref)
        scope_sref = _an.scope_of(sref)
        if _an.scope_of(loop_sref) is not scope_sref:
            raise self._error(name, "the loop must be in the block's scope (not inside "
                              "another block)", loop_sref, f'block "{sref.stmt.name_hint}"')
        if _an.is_ancestor(loop_sref, sref):
            raise self._error(name, "the block is already under the loop", sref,
                              _an.describe(loop_sref))
        _an.require_complete_or_reduction(name, sref)
        scope = _an.BlockScope(self.state, scope_sref)
        _an.require_dominant(name, scope, sref)
        others = scope.producers(sref) if reverse else scope.consumers(sref)
        role = "producer" if reverse else "consumer"
        if not others:
            raise self._error(name, f"the block has no {role} in its scope to be moved to",
                              sref)
        for other in others:
            if not _an.is_ancestor(loop_sref, other):
                raise self._error(name, f"every {role} of the block must be under the loop",
                                  loop_sref, f'{role} "{other.stmt.name_hint}" is not')
        if reverse:
            around = [loop_sref] + [s for s in loop_sref.ancestors() if s.is_loop]
            for producer in others:
                for lp in around:
                    if IterVar.CommReduce in _an.loop_bound_iter_types(
                            producer.realize, lp.stmt.loop_var):
                        raise self._error(name, "the loop must not be a reduction loop of a "
                                          "producer: the block would read partial results",
                                          lp, f'producer "{producer.stmt.name_hint}"')
        order = _order(self.state, scope_sref)
        if reverse != (order[id(sref)] > order[id(loop_sref)]):
            where = "after" if reverse else "before"
            raise self._error(name, f"the block must run {where} the loop", sref,
                              _an.describe(loop_sref))
        position = self._insert_position(name, sref, loop_sref, scope, reverse, index)
        region = self._required_region(sref, loop_sref, others, reverse)
        return {"position": position, "region": region}

    def _insert_position(self, name, sref, loop_sref, scope, reverse, index):
        body = loop_sref.stmt.body
        children = list(body.seq) if isinstance(body, SeqStmt) else [body]
        producers = {id(p.stmt) for p in scope.producers(sref)}
        consumers = {id(c.stmt) for c in scope.consumers(sref)}
        after, before = -1, len(children)
        for k, child in enumerate(children):
            inside = _blocks_in(child)
            if inside & producers:
                after = k
            if inside & consumers and before == len(children):
                before = k
        if after >= before:
            raise self._error(name, "no position under the loop runs after every producer and "
                              "before every consumer of the block", loop_sref)
        if index == -1:
            return before
        if index == -2:
            return after + 1
        if not isinstance(index, int) or not after < index <= before:
            raise self._error(name, "index must be -1, -2, or a position after the block's "
                              "producers and before its consumers under the loop", loop_sref,
                              f"index {index!r}, allowed {after + 1}..{before}")
        return index

    def _required_region(self, sref, loop_sref, others, reverse):
        """{id(buffer): (buffer, [Range])}: per buffer the block writes (reads), the region
        its consumers read (producers write) in one iteration of the loop."""
        blk = sref.stmt
        if reverse:
            wanted = {id(r.buffer): r.buffer for r in blk.reads}
        else:
            wanted = {id(r.buffer): r.buffer for r in blk.writes}
        outer = [loop_sref] + [s for s in loop_sref.ancestors() if s.is_loop]
        ana = _an.analyzer_for(outer)
        region = {}
        for other in others:
            inner = [s for s in _an.loops_of(other) if _an.is_ancestor(loop_sref, s)]
            ranges = _an.loop_ranges(inner)
            regions = other.stmt.writes if reverse else list(other.stmt.reads) + (
                list(other.stmt.writes) if other.stmt.init is not None else [])
            for buf, dims in _an.bound_regions(other.realize, regions, ranges, ana):
                if id(buf) not in wanted:
                    continue
                if id(buf) in region:
                    dims = union_ranges(region[id(buf)][1], dims, ana)
                region[id(buf)] = (buf, dims)
        return region

    # -- rewriting -----------------------------------------------------------------------
    def _apply_at(self, sref, loop_sref, plan, preserve_unit_loops, name):
        blk, realize = sref.stmt, sref.realize
        reverse = name == "reverse_compute_at"
        outer = [loop_sref] + [s for s in loop_sref.ancestors() if s.is_loop]
        ana = _an.analyzer_for(outer)
        iter_ranges = self._solve_iters(sref, plan["region"], reverse, name, ana)
        loops, values, guards = [], [], []
        for iv, (lo, extent) in zip(blk.iter_vars, iter_ranges):
            extent = ana.simplify(extent)
            if isinstance(extent, IntImm) and extent.value == 1 and not preserve_unit_loops:
                value = lo
            else:
                var = Var(f"ax{len(loops)}", iv.var.dtype)
                loops.append((var, extent))
                value = ana.simplify(_op.add(lo, var)) if not is_zero(lo) else var
                ana.bind(var, Range.from_min_extent(_op.const(0, var.dtype), extent))
            values.append(value)
            dom_end = _op.add(iv.dom.min, iv.dom.extent)
            if not ana.can_prove(_op.greater_equal(value, iv.dom.min)):
                guards.append(_op.greater_equal(value, iv.dom.min))
            if not ana.can_prove(_op.less(value, dom_end)):
                guards.append(_op.less(value, dom_end))
        predicate = True
        for g in guards:
            predicate = conjoin(predicate, g)
        stmt = BlockRealize(values, predicate, blk)
        for var, extent in reversed(loops):
            stmt = For(var, 0, extent, ForKind.SERIAL, stmt)
        loop = loop_sref.stmt
        body = loop.body
        children = list(body.seq) if isinstance(body, SeqStmt) else [body]
        children.insert(plan["position"], stmt)
        new_loop = loop.with_fields(body=stmt_seq(*children))
        self._replace(sref, {realize: REMOVE, loop: new_loop})

    def _solve_iters(self, sref, region, reverse, name, ana):
        """(start, extent) of each block axis so that it covers ``region``."""
        blk = sref.stmt
        accesses = blk.reads if reverse else blk.writes
        axis_ids = {id(iv.var) for iv in blk.iter_vars}
        spans = {}
        for access in accesses:
            entry = region.get(id(access.buffer))
            if entry is None:
                continue
            for rng, need in zip(access.region, entry[1]):
                if not set(_an.vars_in(rng.min)) & axis_ids:
                    continue  # an index without block axes: nothing to solve
                if not (isinstance(rng.min, Var) and isinstance(rng.extent, IntImm) and
                        rng.extent.value == 1):
                    raise self._error(name, "each dimension of the block's accesses to the "
                                      "moved region must be indexed by one block axis", sref,
                                      f"buffer {access.buffer.name} is indexed by {rng.min!r}")
                key = id(rng.min)
                span = (need.min, need.extent)
                if key in spans and not (ana.can_prove_equal(spans[key][0], span[0]) and
                                         ana.can_prove_equal(spans[key][1], span[1])):
                    if reverse:
                        raise self._error(name, "the block reads the produced buffers over "
                                          "different regions through one axis", sref)
                    lo = ana.simplify(_op.min(spans[key][0], span[0]))
                    hi = ana.simplify(_op.max(_op.add(*spans[key]), _op.add(*span)))
                    span = (lo, ana.simplify(_op.subtract(hi, lo)))
                spans[key] = span
        out = []
        for iv in blk.iter_vars:
            if iv.iter_type == IterVar.DataPar and id(iv.var) in spans:
                lo, extent = spans[id(iv.var)]
                out.append((_op.cast(lo, iv.var.dtype), _op.cast(extent, iv.var.dtype)))
                continue
            if id(iv.var) in spans:
                lo, extent = spans[id(iv.var)]
                end, dom_end = _op.add(lo, extent), _op.add(iv.dom.min, iv.dom.extent)
                if not (ana.can_prove(_op.less_equal(lo, iv.dom.min)) and
                        ana.can_prove(_op.greater_equal(end, dom_end))):
                    raise self._error(name, "a reduction axis of the block would see only part "
                                      "of its range in one iteration of the loop", sref,
                                      f"axis {iv.var.name_hint}")
            out.append((iv.dom.min, iv.dom.extent))
        return out
