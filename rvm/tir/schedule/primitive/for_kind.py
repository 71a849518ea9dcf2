"""Loop kinds: parallel, vectorize, unroll.

A loop may run in parallel or as SIMD lanes only when its iterations are
independent: every block under it binds the loop variable to spatial axes
only (a reduction axis would make iterations update the same element).
"""
from rvm.tir.expr import IterVar
from rvm.tir.schedule import analysis as _an
from rvm.tir.stmt import ForKind

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
        if kind in (ForKind.PARALLEL, ForKind.VECTORIZED):
            self._check_independent_iterations(sref, primitive)
        if old.kind != kind:
            self._replace(sref, {old: old.with_fields(kind=kind)})

    def _check_independent_iterations(self, sref, primitive):
        var = sref.stmt.loop_var
        for block in _an.blocks_under(self.state, sref):
            types = _an.loop_bound_iter_types(block, var) - {IterVar.DataPar}
            if types:
                kind = _AXIS_NAMES.get(min(types), "non-spatial")
                raise self._error(primitive, f"the loop is bound to a {kind} axis of a block, so "
                                  "its iterations are not independent", sref,
                                  f'block "{block.stmt.name_hint}"')
            if id(var) in _an.vars_in(block.realize.iter_values):
                _an.require_affine_binding(primitive, block)
