"""Loop transformations: split, fuse, reorder, add_unit_loop.

    for j in range(128):            sch.split(j, [None, 4])      for j_0, j_1 in T.grid(32, 4):
        B[j] = A[j] * 2.0             ->                              B[j_0 * 4 + j_1] = ...

Splits whose factors do not divide the extent guard the blocks with a predicate.
"""
from rvm.ir.base import structural_equal
from rvm.tir import op as _op
from rvm.tir.expr import IterVar, Var
from rvm.tir.schedule import analysis as _an
from rvm.tir.schedule.primitive.utils import (
    analyzer_with, conjoin, is_one, is_zero, rewrite_realizes, substitute_tracked,
)
from rvm.tir.schedule.rv import LoopRV
from rvm.tir.stmt import For, ForKind


class LoopTransformations:
    """Schedule methods changing the loop structure."""

    def split(self, loop, factors, preserve_unit_iters=True, disable_predication=False):
        """Splits ``loop`` into nested loops of extents ``factors`` (at most one None,
        inferred); blocks are guarded by a predicate when the factors overshoot the extent.
        Returns the new loops, outermost first."""
        sref = self._loop(loop, "split")
        old = sref.stmt
        factors = list(factors)
        if not factors:
            raise self._error("split", "at least one factor is needed", sref)
        values = [None if f is None else self._value(f) for f in factors]
        if values.count(None) > 1:
            raise self._error("split", "at most one factor may be None (inferred)", sref,
                              f"factors {values}")
        if any(v is not None and v <= 0 for v in values):
            raise self._error("split", "factors must be positive", sref, f"factors {values}")
        dtype = old.loop_var.dtype
        known = 1
        for v in values:
            known *= v if v is not None else 1
        extent = _an.const_extent(old)
        if None in values:
            k = values.index(None)
            values[k] = -(-extent // known) if extent is not None else \
                _op.floordiv(_op.add(old.extent, known - 1), known)
        elif extent is None:
            raise self._error("split", "the factors' product must cover the loop extent, which "
                              "is symbolic: leave one factor None", sref,
                              f"extent {old.extent!r}, factors {values}")
        elif known < extent:
            raise self._error("split", "the factors' product must cover the loop extent", sref,
                              f"factors {values} multiply to {known} < extent {extent}")
        exact = extent is not None and isinstance(values[0], int) and _product(values) == extent
        names = [f"{old.loop_var.name_hint}_{k}" for k in range(len(values))]
        new_vars = [Var(n, dtype) for n in names]
        fused = None
        for var, f in zip(new_vars, values):
            term = _op.const(0, dtype) if (is_one(_op.convert(f, dtype)) and
                                          not preserve_unit_iters) else var
            fused = term if fused is None else _op.add(_op.multiply(fused, f), term)
        value = _op.add(fused, old.min) if not is_zero(old.min) else fused
        body, reuse = substitute_tracked(old.body, {old.loop_var: value})
        loops = [For(v, 0, _op.convert(f, dtype), ForKind.SERIAL, body) for v, f in
                 zip(new_vars, values)]
        ana = analyzer_with(loops)
        if not exact and not disable_predication:
            guard = _op.less(fused, old.extent)

            def add_guard(realize):
                return realize.with_fields(predicate=ana.simplify(conjoin(realize.predicate,
                                                                         guard)))

            body = rewrite_realizes(body, add_guard)
        body = rewrite_realizes(body, lambda r: _simplify_bindings(r, ana))
        for var, f in reversed(list(zip(new_vars, values))):
            body = For(var, 0, _op.convert(f, dtype), ForKind.SERIAL, body)
        self._replace(sref, {old: body}, reuse)
        rvs = []
        node = body
        for _ in values:
            rvs.append(self._new_rv(LoopRV, self.state.loop_sref(node)))
            node = node.body
        return self._record("Split", [loop] + factors, [preserve_unit_iters,
                                                       disable_predication], rvs)

    def fuse(self, *loops, preserve_unit_iters=True):
        """Fuses directly nested loops (outermost first) into one loop; returns it."""
        if not loops:
            raise ValueError("fuse expects at least one loop")
        srefs = [self._loop(rv, "fuse") for rv in loops]
        for outer, inner in zip(srefs, srefs[1:]):
            if outer.stmt.body is not inner.stmt:
                raise self._error("fuse", "the loops must be directly nested, each the only "
                                  "statement in the body of the previous one", inner,
                                  f"{_an.describe(inner)} is not the body of "
                                  f"{_an.describe(outer)}")
        own = {id(s.stmt.loop_var) for s in srefs}
        for s in srefs:
            if set(_an.vars_in(s.stmt.extent)) & own or set(_an.vars_in(s.stmt.min)) & own:
                raise self._error("fuse", "a fused loop's range may not depend on another "
                                  "fused loop", s)
        first = srefs[0].stmt
        dtype = first.loop_var.dtype
        name = "_".join(s.stmt.loop_var.name_hint for s in srefs) + "_fused"
        fused = Var(name, dtype)
        extent = _op.const(1, dtype)
        for s in srefs:
            extent = _op.multiply(extent, s.stmt.extent)
        mapping = {}
        stride = _op.const(1, dtype)
        # a loop of no iterations makes the fused loop run none: its body's indices are
        # never evaluated, and dividing by that zero extent would not be defined
        empty = any(is_zero(s.stmt.extent) for s in srefs)
        for k, s in reversed(list(enumerate(srefs))):
            loop_ = s.stmt
            if empty or is_one(loop_.extent) and not preserve_unit_iters:
                mapping[loop_.loop_var] = loop_.min
                continue
            value = fused if is_one(stride) else _op.floordiv(fused, stride)
            if k > 0:
                value = _op.floormod(value, loop_.extent)
            mapping[loop_.loop_var] = value if is_zero(loop_.min) else _op.add(value,
                                                                                loop_.min)
            stride = _op.multiply(stride, loop_.extent)
        body, reuse = substitute_tracked(srefs[-1].stmt.body, mapping)
        new = For(fused, 0, extent, ForKind.SERIAL, body)
        ana = analyzer_with([new])
        new = new.with_fields(body=rewrite_realizes(body, lambda r: _simplify_bindings(r, ana)))
        self._replace(srefs[0], {first: new}, reuse)
        rv = self._new_rv(LoopRV, self.state.loop_sref(new))
        return self._record("Fuse", list(loops), [preserve_unit_iters], rv)

    def reorder(self, *ordered_loops):
        """Reorders loops of one perfectly nested chain: the given loops take the positions
        they occupy, in the given order; loops not given stay where they are."""
        srefs = [self._loop(rv, "reorder") for rv in ordered_loops]
        if len({id(s) for s in srefs}) != len(srefs):
            raise self._error("reorder", "a loop is given twice")
        if len(srefs) < 2:
            self._record("Reorder", list(ordered_loops), [], None)
            return
        given = {id(s) for s in srefs}
        bottom = max(srefs, key=lambda s: sum(1 for _ in s.ancestors()))
        chain = [bottom]
        for parent in bottom.ancestors():
            if given <= {id(c) for c in chain}:
                break
            if parent.is_block:
                break
            chain.append(parent)
        chain.reverse()
        if not given <= {id(c) for c in chain}:
            raise self._error("reorder", "the loops must be nested in one another (one loop "
                              "chain under one block)", srefs[0])
        for outer, inner in zip(chain, chain[1:]):
            if outer.stmt.body is not inner.stmt:
                raise self._error("reorder", "the loops must be perfectly nested: no other "
                                  "statement or block between them", inner,
                                  f"{_an.describe(inner)} is not the only statement of "
                                  f"{_an.describe(outer)}")
        self._check_reorder_legal(chain, srefs)
        order = iter(srefs)
        new_chain = [next(order) if id(c) in given else c for c in chain]
        _check_no_parallel_in_lanes(self, new_chain)
        body = chain[-1].stmt.body
        for s in reversed(new_chain):
            body = s.stmt.with_fields(body=body)
        self._replace(chain[0], {chain[0].stmt: body})
        self._record("Reorder", list(ordered_loops), [], None)

    def _check_reorder_legal(self, chain, srefs):
        ids = {id(s.stmt.loop_var) for s in chain}
        for s in chain:
            if set(_an.vars_in(s.stmt.extent)) & ids or set(_an.vars_in(s.stmt.min)) & ids:
                raise self._error("reorder", "a loop's range may not depend on another loop "
                                  "being reordered", s)
        for block in _an.blocks_under(self.state, chain[0]):
            if block.realize is None:
                continue
            _an.require_affine_binding("reorder", block)
            for iv, value in zip(block.stmt.iter_vars, block.realize.iter_values):
                if iv.iter_type not in (IterVar.DataPar, IterVar.CommReduce) and \
                        set(_an.vars_in(value)) & ids:
                    raise self._error("reorder", "loops bound to an ordered (scan) or opaque "
                                      "axis cannot be reordered: their iterations depend on "
                                      "each other", block, f"axis {iv.var.name_hint}")
            _check_no_carried_dependence("reorder", self, block)

    def add_unit_loop(self, block_or_loop):
        """Wraps a block or loop in a new loop of extent 1; returns it."""
        sref = self._block_or_loop(block_or_loop, "add_unit_loop")
        target = sref.realize if sref.is_block else sref.stmt
        if sref.is_block and sref.parent is None:
            raise self._error("add_unit_loop", "the root block cannot be wrapped in a loop",
                              sref)
        new = For(Var("u", "int32"), 0, 1, ForKind.SERIAL, target)
        self._replace(sref, {target: new})
        rv = self._new_rv(LoopRV, self.state.loop_sref(new))
        return self._record("AddUnitLoop", [block_or_loop], [], rv)


def _check_no_parallel_in_lanes(sch, new_chain):
    """The rule ``parallel`` and ``vectorize`` check, kept by the new loop order."""
    lanes = None
    for s in new_chain:
        if s.stmt.kind == ForKind.PARALLEL and lanes is not None:
            raise sch._error("reorder", "a parallel loop may not move inside a vectorized loop: "
                             "OpenMP runs no parallel region inside SIMD lanes", s,
                             f"inside vectorized loop {lanes.stmt.loop_var.name_hint}")
        if s.stmt.kind == ForKind.VECTORIZED and lanes is None:
            lanes = s


def _check_no_carried_dependence(primitive, sch, block_sref):
    """A block reading what it writes at other indices carries a dependence between the
    iterations of its loops (only a reduction's read-back of its own output is allowed)."""
    block = block_sref.stmt
    written = {id(r.buffer): r for r in block.writes}
    for region in block.reads:
        if id(region.buffer) in written and not (
                block.init is not None and structural_equal(region, written[id(region.buffer)],
                                                            map_free_vars=False)):
            raise sch._error(primitive, "the block reads a buffer it writes, so iterations "
                             "depend on earlier ones and their order cannot change", block_sref,
                             f"buffer {region.buffer.name}")


def _simplify_bindings(realize, ana):
    values = tuple(ana.simplify(v) for v in realize.iter_values)
    if all(a is b for a, b in zip(values, realize.iter_values)):
        return realize
    return realize.with_fields(iter_values=values)


def _product(values):
    out = 1
    for v in values:
        out *= v
    return out
