"""Loop kinds: parallel, vectorize, unroll, and the rules each one checks.

- A loop has one kind: a primitive changes a serial loop (or re-applies the
  loop's own kind), never a loop another primitive made parallel, vectorized,
  unrolled or thread-bound (that would silently drop the earlier decision).
- A loop may run in parallel or as SIMD lanes only when its iterations are
  independent: every block under it binds the loop variable to spatial axes
  only (a reduction axis would make iterations update the same element), as
  TVM's ``CheckParallelizability`` requires.
- SIMD lanes are one fixed-length dimension: a vectorized loop has a constant
  extent, is not nested in another vectorized loop and has no parallel loop
  under it (OpenMP allows no ``parallel`` region inside a ``simd`` one), so a
  parallel loop is never placed under a vectorized one either.
- Unrolling copies the body once per iteration: the loop's extent is a
  constant (TVM's lowering refuses to unroll others), and the loops unrolled
  along any path through it multiply to at most ``MAX_UNROLL_STEPS`` copies.
"""
from rvm.tir.expr import IntImm, IterVar
from rvm.tir.schedule import analysis as _an
from rvm.tir.schedule.state import children_of
from rvm.tir.stmt import For, ForKind

MAX_UNROLL_STEPS = 4096  # copies of a body the nested unrolled loops may make

_AXIS_NAMES = {IterVar.CommReduce: "reduction", IterVar.Ordered: "ordered (scan)",
               IterVar.Opaque: "opaque"}


class LoopKinds:
    """Schedule methods setting how a loop runs."""

    def parallel(self, loop):
        """Runs ``loop``'s iterations in parallel threads (OpenMP in the C backend)."""
        self._set_kind(loop, ForKind.PARALLEL, "parallel")
        self._record("Parallel", [loop], [], None)

    def vectorize(self, loop):
        """Runs ``loop``'s iterations as SIMD lanes."""
        self._set_kind(loop, ForKind.VECTORIZED, "vectorize")
        self._record("Vectorize", [loop], [], None)

    def unroll(self, loop):
        """Unrolls ``loop``."""
        self._set_kind(loop, ForKind.UNROLLED, "unroll")
        self._record("Unroll", [loop], [], None)

    def _set_kind(self, loop, kind, primitive):
        sref = self._loop(loop, primitive)
        old = sref.stmt
        self._check_one_kind(sref, kind, primitive)
        if kind in (ForKind.VECTORIZED, ForKind.UNROLLED) and _an.const_extent(old) is None:
            why = "a vectorized loop runs a fixed number of lanes" if kind == ForKind.VECTORIZED \
                else "an unrolled loop is copied a fixed number of times"
            raise self._error(primitive, f"the loop's extent must be a constant: {why}",
                              sref, f"extent {old.extent}")
        if kind in (ForKind.PARALLEL, ForKind.VECTORIZED):
            self._check_independent_iterations(sref, primitive)
        self._check_nesting(sref, kind, primitive)
        if old.kind != kind:
            self._replace(sref, {old: old.with_fields(kind=kind)})

    def _check_one_kind(self, sref, kind, primitive):
        loop = sref.stmt
        current = ForKind.THREAD_BINDING if loop.thread_binding is not None else loop.kind
        if current not in (ForKind.SERIAL, kind):
            raise self._error(primitive, "a loop has one kind: it is already "
                              f"{current.name.lower()}", sref,
                              f"asked to make it {kind.name.lower()}")

    def _check_independent_iterations(self, sref, primitive):
        var = sref.stmt.loop_var
        for block in _an.blocks_under(self.state, sref):
            types = _an.loop_bound_iter_types(block.realize, var) - {IterVar.DataPar}
            if types:
                kind = _AXIS_NAMES.get(min(types), "non-spatial")
                raise self._error(primitive, f"the loop is bound to a {kind} axis of a block, so "
                                  "its iterations are not independent", sref,
                                  f'block "{block.stmt.name_hint}"')
            if id(var) in _an.vars_in(block.realize.iter_values):
                _an.require_affine_binding(primitive, block)

    def _check_nesting(self, sref, kind, primitive):
        outer = [s for s in sref.ancestors() if s.is_loop]
        if kind in (ForKind.PARALLEL, ForKind.VECTORIZED):
            for s in outer:
                if s.stmt.kind == ForKind.VECTORIZED:
                    what = "another vectorized loop: SIMD lanes are one dimension" \
                        if kind == ForKind.VECTORIZED else \
                        "a vectorized loop: OpenMP runs no parallel region inside SIMD lanes"
                    raise self._error(primitive, f"the loop is nested in {what}", sref,
                                      f"in vectorized loop {s.stmt.loop_var.name_hint}")
        if kind == ForKind.VECTORIZED:
            for loop in loops_below(sref.stmt):
                if loop.kind == ForKind.PARALLEL:
                    raise self._error(primitive, "a vectorized loop has no parallel loop under "
                                      "it: OpenMP runs no parallel region inside SIMD lanes",
                                      sref, f"parallel loop {loop.loop_var.name_hint}")
                if loop.kind == ForKind.VECTORIZED:
                    raise self._error(primitive, "a vectorized loop has no vectorized loop under "
                                      "it: SIMD lanes are one dimension", sref,
                                      f"vectorized loop {loop.loop_var.name_hint}")
        if kind == ForKind.UNROLLED:
            steps = _an.const_extent(sref.stmt) * unrolled_steps(sref.stmt.body)
            for s in outer:
                if s.stmt.kind == ForKind.UNROLLED and _an.const_extent(s.stmt) is not None:
                    steps *= _an.const_extent(s.stmt)
            if steps > MAX_UNROLL_STEPS:
                raise self._error(primitive, "the unrolled loops around a statement may copy it "
                                  f"at most {MAX_UNROLL_STEPS} times", sref,
                                  f"{steps} copies with the unrolled loops above and below it")


def loops_below(stmt):
    """Every For strictly under ``stmt`` (inside nested blocks too), outermost first."""
    for child in children_of(stmt):
        if isinstance(child, For):
            yield child
        yield from loops_below(child)


def unrolled_steps(stmt):
    """The largest product of constant extents of unrolled loops along one path down from
    ``stmt`` (``stmt`` included): how many copies unrolling makes of the deepest body."""
    own = 1
    if isinstance(stmt, For) and stmt.kind == ForKind.UNROLLED \
            and isinstance(stmt.extent, IntImm):
        own = stmt.extent.value
    return own * max((unrolled_steps(c) for c in children_of(stmt)), default=1)
