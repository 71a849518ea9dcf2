"""Proving the buffer accesses of a generated C kernel in bounds.

``BoundsProver`` follows the C emitter through a lowered PrimFunc (loops,
lets and branch conditions in scope) and decides, for each access
``buf[index]`` into memory of ``size`` elements, whether ``0 <= index <
size`` holds for every argument that passes the kernel's checks. Accesses it
cannot prove are guarded by the emitter (an out-of-bounds index sets an
error; it never reads or writes).

Reasoning is over polynomials with rational coefficients in *atoms*: shape
variables (exact tensor dimensions, never negative), scalar parameters,
loop variables (with their ranges) and non-polynomial subexpressions
(floordiv, min, casts, ...), evaluated over the mathematical integers. An
expression's C value equals its mathematical value only while every step
stays inside the range of the C type it is computed in, so every
intermediate is checked: each sum, difference and product, each operand of
a division, min, max or cast, each loop bound and each side of a branch
condition must lie in the range of its own dtype and of its operands'
dtypes (C converts between them). A let variable holds its value converted
to the variable's dtype, as C's ``const int8_t t = <int64 value>`` does.
Each check is proven when the bounds are constants, otherwise recorded as a
*requirement*, a polynomial in shape variables and scalar parameters that
the kernel checks on entry (with overflow-checked arithmetic) before it
runs; a check that can fail leaves the access unproven, and guarded.

The prover's work on one kernel is bounded (``WORK_LIMIT`` steps: expression nodes
visited and polynomial terms formed): a kernel whose expressions share subtrees can
expand to far more nodes than it stores, and polynomials multiply out. Past the budget
every question fails, so the remaining accesses are guarded, never assumed.
"""
import math
from fractions import Fraction

from rvm.codegen.c.bound_poly import (
    INT64, add, as_const, common_range, const, dtype_range, floordiv_bound, mul, scale,
)
from rvm.ir.base import structural_equal, structural_hash
from rvm.tir import expr as E

_RING = (E.Add, E.Sub, E.Mul)


class _Fail(Exception):
    pass


# Steps of one kernel's proofs: kernels of the test suite (models, tuned schedules) take at
# most about 6,600; a step costs a few microseconds.
WORK_LIMIT = 1 << 16
# Terms of one polynomial: an index of real code has a handful.
MAX_TERMS = 64


# Nodes of an atom shared by structure (``_pure_size``); larger atoms are keyed per node.
MAX_SHARED_ATOM = 32
_PURE = (E.Var, E.IntImm, E.Add, E.Sub, E.Mul, E.FloorDiv, E.FloorMod, E.Div, E.Mod, E.Min,
         E.Max, E.Cast)


def _pure_size(e):
    """The node count of ``e`` when it is built of variables, integer constants and integer
    arithmetic only, in at most MAX_SHARED_ATOM nodes; else None."""
    stack, size = [e], 0
    while stack:
        node = stack.pop()
        size += 1
        if size > MAX_SHARED_ATOM or not isinstance(node, _PURE):
            return None
        if not isinstance(node, (E.Var, E.IntImm)):
            stack.extend(getattr(node, name) for name in ("a", "b", "value")
                         if hasattr(node, name))
    return size


# Integer values the prover does not follow into (loads, selects, calls): each lies in the
# range of its own C type.
_OPAQUE_VALUES = (E.BufferLoad, E.Call, E.Select)


class BoundsProver:
    """Scopes (``push_loop``/``push_let``/``push_fact``, each with ``pop``) and ``proves``.

    ``symbols`` maps id(var) -> var for shape variables (non-negative) and
    ``params`` for scalar parameters; ``requirements`` collects the
    polynomial range checks that proofs relied on, as (poly, lo, hi). ``dims``: tensor
    dimensions that are products of symbols (``s70 * s72``, a batch times a sequence
    flattened), each then a non-negative monomial (``products``) on the requirement,
    checked on entry, that its value lies in [0, INT64_MAX]; a scalar parameter among its
    factors is required to lie in that range too, and is then a size like a shape variable.
    """

    def __init__(self, shape_vars, scalar_params, dims=()):
        self.nonneg = {id(v): v for v in shape_vars}
        self.symbols = dict(self.nonneg)
        for v in scalar_params:
            if v.dtype.is_int or v.dtype.is_uint:
                self.symbols[id(v)] = v
        self.loops = {}  # id(var) -> (lo poly, hi poly, requirements)
        self.lets = {}  # id(var) -> exact poly of the value
        self.nodes = {}  # atom key -> expression node
        self._atoms = {}  # structural hash -> the atoms' nodes
        self.facts = []  # (poly F with F >= 0 when the C condition held, requirements)
        self.requirements = {}
        self._stack = []
        self._open = set()  # atoms whose interval is being computed
        self.work = 0  # steps spent, against WORK_LIMIT
        self.products = set()
        self.positive = {}  # id(loop var) -> symbols its running makes at least 1
        for dim in dims:
            self._product_dim(dim)

    def _product_dim(self, dim):
        """Records ``dim`` in ``products`` when it is a product of two or more symbols."""
        factors, stack = [], [dim]
        while stack:
            node = stack.pop()
            if isinstance(node, E.Mul):
                stack += [node.a, node.b]
            elif isinstance(node, E.Var) and id(node) in self.symbols:
                factors.append(id(node))
            else:
                return
        m = tuple(sorted(factors))
        if len(m) < 2:
            return
        for key in m:
            if key not in self.nonneg:
                # a scalar parameter that is a factor of a dimension is a size: checked to be
                # one on entry, so that its products with loop indices keep their sign
                var = self.symbols[key]
                poly = {(key,): Fraction(1)}
                self.requirements[(tuple(sorted(poly.items())), 0, dtype_range(var.dtype)[1])] \
                    = (poly, 0, dtype_range(var.dtype)[1])
                self.nonneg[key] = var
        self.products.add(m)  # the proof of its own range reads it as a monomial
        reqs = []
        try:
            poly = self._exact(dim, reqs)
            self._require(poly, 0, dtype_range(dim.dtype)[1], reqs)
        except _Fail:
            self.products.discard(m)
            return
        for p, lo, hi in reqs:
            self.requirements[(tuple(sorted(p.items())), lo, hi)] = (p, lo, hi)

    def _nonneg_monomial(self, m):
        return all(k in self.nonneg for k in m) or m in self.products

    def _spend(self, steps):
        self.work += steps

        if self.work > WORK_LIMIT:
            raise _Fail

    # ---- scopes
    def push_loop(self, var, start, extent):
        """Enters ``for var in [start, start + extent)``."""
        info = None
        if var.dtype.is_int and var.dtype.lanes == 1:
            try:
                reqs = []
                first = self._exact(start, reqs)
                end = add(first, self._exact(extent, reqs))
                # C runs ``for (var = start; var < start + extent; ++var)``: the bounds and the
                # sum must be exact in the variable's type and in the bounds' own types.
                lo_r, hi_r = common_range(var, start, extent)
                s_lo, s_hi = self._interval(first, reqs)
                e_lo, e_hi = self._interval(end, reqs)
                for p in (s_lo, s_hi, e_lo, e_hi):
                    self._require(p, lo_r, hi_r, reqs)
                self._operand(start, reqs)
                self._operand(extent, reqs)
                info = (s_lo, add(e_hi, const(-1)), reqs)
                self._sizes_of_extent(var, self._exact(extent, []))
            except _Fail:
                info = None
        self.loops[id(var)] = info
        self._stack.append(("loop", id(var)))

    def _sizes_of_extent(self, var, extent):
        """Inside a loop over ``c * s1 * s2 ...`` (sizes, ``c >= 1``), which runs only when
        that is at least 1, each of the sizes is at least 1."""
        if len(extent) == 1:
            (m, c), = extent.items()
            if m and c >= 1 and all(k in self.nonneg for k in m):
                self.positive[id(var)] = set(m)

    def _is_positive(self, key):
        return any(key in keys for keys in self.positive.values())

    def push_let(self, var, value):
        """Enters a scope where ``var`` equals ``value`` converted to ``var``'s dtype."""
        self.lets[id(var)] = None  # a value reading the variable itself is not analysed
        if (var.dtype.is_int or var.dtype.is_uint) and var.dtype.lanes == 1:
            try:
                reqs = []
                value_poly = self._exact(value, reqs)
                if value.dtype != var.dtype:
                    # C converts the value on assignment: equal only when it fits.
                    lo_r, hi_r = common_range(var, value)
                    for p in self._interval(value_poly, reqs):
                        self._require(p, lo_r, hi_r, reqs)
                self.lets[id(var)] = (value_poly, reqs)
            except _Fail:
                pass
        self._stack.append(("let", id(var)))

    def push_fact(self, cond, holds=True):
        """Enters a branch taken when ``cond`` is true (``holds``) or false."""
        added, narrowed = 0, []
        for f in self._facts_of(cond, holds):
            self.facts.append(f)
            added += 1
            narrowed += self._narrow_loop(*f)
        self._stack.append(("facts", (added, narrowed)))

    def _narrow_loop(self, fact, fact_reqs):
        """``[(loop key, its range before)]`` after narrowing the range of the loop variable
        ``v`` when ``fact`` is ``c * v + k >= 0`` and the range has constant bounds (a pad's
        ``i >= 1``, ``i < n + 1``): one fact then bounds every index ``v`` appears in, with
        any coefficient, where a fact used whole only proves an index it is part of. The
        narrowed range carries the fact's requirements."""
        terms = [m for m in fact if m]
        if len(terms) != 1 or len(terms[0]) != 1:
            return []
        key, c, k = terms[0][0], fact[terms[0]], fact.get((), Fraction(0))
        info = self.loops.get(key)
        if info is None:
            return []
        lo, hi = as_const(info[0]), as_const(info[1])
        if lo is None or hi is None:
            return []
        if c > 0:
            lo = max(lo, Fraction(math.ceil(-k / c)))
        else:
            hi = min(hi, Fraction(math.floor(k / -c)))
        self.loops[key] = (const(lo), const(hi), list(info[2]) + list(fact_reqs))
        return [(key, info)]

    def pop(self):
        """Leaves the innermost scope."""
        kind, value = self._stack.pop()
        if kind == "loop":
            self.loops.pop(value, None)
            self.positive.pop(value, None)
        elif kind == "let":
            self.lets.pop(value, None)
        else:
            added, narrowed = value
            del self.facts[len(self.facts) - added:]
            for key, info in reversed(narrowed):
                self.loops[key] = info

    def _facts_of(self, cond, holds):
        if isinstance(cond, E.Not):
            return self._facts_of(cond.a, not holds)
        if isinstance(cond, E.And) and holds or isinstance(cond, E.Or) and not holds:
            return self._facts_of(cond.a, holds) + self._facts_of(cond.b, holds)
        flip = {E.LT: E.GE, E.GE: E.LT, E.LE: E.GT, E.GT: E.LE}
        kind = type(cond)
        if kind not in flip or not (cond.a.dtype.is_int and cond.a.dtype.lanes == 1):
            return []
        if not holds:
            kind = flip[kind]
        try:
            reqs = []
            a, b = self._exact(cond.a, reqs), self._exact(cond.b, reqs)
            lo_r, hi_r = common_range(cond.a, cond.b)
            for side in (a, b):
                for p in self._interval(side, reqs):
                    self._require(p, lo_r, hi_r, reqs)
        except _Fail:
            return []
        diff = {E.LT: (b, a, -1), E.LE: (b, a, 0), E.GT: (a, b, -1), E.GE: (a, b, 0)}[kind]
        return [(add(add(diff[0], diff[1], -1), const(diff[2])), reqs)]

    # ---- the question
    def proves(self, index, size):
        """Whether ``0 <= index < size`` always holds; ``size`` is a list of factors (ints,
        or PrimExprs evaluated once, in scope, whose C values are the memory's extent)."""
        if not (index.dtype.is_int or index.dtype.is_uint) or index.dtype.lanes != 1:
            return False
        reqs = []
        try:
            x = self._exact(index, reqs)
            s = const(1)
            for factor in size:
                if isinstance(factor, int):
                    s = mul(s, const(factor))
                else:
                    s = mul(s, self._exact(factor, reqs))
                    if not self._nonneg(self._operand(factor, reqs)[0]):
                        return False
            if not self._nonneg_with_facts(x, reqs):
                return False
            if not self._nonneg_with_facts(add(add(s, x, -1), const(-1)), reqs):
                return False
            if index.dtype.bits < 64 or index.dtype.is_uint:
                lo_r, hi_r = dtype_range(index.dtype)
                _, hi = self._interval(x, reqs)
                self._require(hi, lo_r, hi_r, reqs)
        except _Fail:
            return False
        for poly, lo, hi in reqs:
            key = (tuple(sorted(poly.items())), lo, hi)
            self.requirements[key] = (poly, lo, hi)
        return True

    def _nonneg_with_facts(self, x, reqs):
        trial = []
        try:
            if self._nonneg(self._interval(x, trial)[0]):
                reqs.extend(trial)
                return True
        except _Fail:
            pass
        for fact, fact_reqs in self.facts:
            trial = list(fact_reqs)
            try:
                if self._nonneg(self._interval(add(x, fact, -1), trial)[0]):
                    reqs.extend(trial)
                    return True
            except _Fail:
                continue
        return False

    def _nonneg(self, p):
        """Whether polynomial ``p`` (in symbols) is provably >= 0."""
        for m, c in p.items():
            if c < 0 or not self._nonneg_monomial(m):
                return False
        return True

    def _require(self, p, lo, hi, reqs):
        if any(v.denominator != 1 for v in p.values()):
            # (a bound of a division by a constant, n / 6 - 5 / 6) Over nonnegative monomials
            # p lies between its coefficients rounded down and rounded up: both in range
            # puts p in range.
            if any(v.denominator != 1 and not self._nonneg_monomial(m)
                   for m, v in p.items()):
                raise _Fail
            for rounded in (math.floor, math.ceil):
                self._require({m: Fraction(rounded(v)) for m, v in p.items() if rounded(v)},
                              lo, hi, reqs)
            return
        c = as_const(p)
        if c is not None:
            if not lo <= c <= hi:
                raise _Fail
            return
        reqs.append((p, lo, hi))

    # ---- exact polynomials over atoms
    def _exact(self, e, reqs):
        """The polynomial of ``e``'s value; the range checks of its sums and products that
        make the C value equal to it go to ``reqs``."""
        self._spend(1)
        if not (e.dtype.is_int or e.dtype.is_uint) or e.dtype.lanes != 1:
            raise _Fail
        if isinstance(e, E.IntImm):
            lo_r, hi_r = dtype_range(e.dtype)
            if not lo_r <= e.value <= hi_r:
                raise _Fail
            return const(e.value)
        if isinstance(e, E.Var):
            if id(e) in self.lets:
                value = self.lets[id(e)]
                if value is None:
                    raise _Fail
                reqs.extend(value[1])
                return value[0]
            if id(e) in self.symbols or self.loops.get(id(e)) is not None:
                self.nodes[id(e)] = e
                return {(id(e),): Fraction(1)}
            raise _Fail
        if isinstance(e, _RING):
            a, b = self._exact(e.a, reqs), self._exact(e.b, reqs)
            if isinstance(e, E.Mul):
                self._spend(len(a) * len(b))
                out = mul(a, b)
            else:
                self._spend(len(a) + len(b))
                out = add(a, b, -1 if isinstance(e, E.Sub) else 1)
            if len(out) > MAX_TERMS:
                raise _Fail
            lo_r, hi_r = common_range(e, e.a, e.b)
            for p in self._interval(out, reqs):
                self._require(p, lo_r, hi_r, reqs)
            return out
        return {(self._atom_key(e),): Fraction(1)}

    def _atom_key(self, e):
        """The key of the atom ``e``: one per structure for a small integer expression of
        variables (``n // 6`` in a loop bound and in a start a pass rebuilt apart: one atom,
        which cancels), else one per node (a load may read other values elsewhere)."""
        size = _pure_size(e)
        if size is None:
            self.nodes[id(e)] = e
            return id(e)
        self._spend(size)
        copies = self._atoms.setdefault(structural_hash(e), [])
        for node in copies:
            if node is e or structural_equal(node, e):
                return id(node)
        copies.append(e)
        self.nodes[id(e)] = e
        return id(e)

    # ---- intervals of polynomials, in symbols only
    def _interval(self, p, reqs):
        self._spend(len(p))
        lo, hi = {}, {}
        for m, c in p.items():
            if not m:
                lo, hi = add(lo, {(): c}), add(hi, {(): c})
                continue
            mlo, mhi = const(1), const(1)
            if m in self.products:  # its symbols have no ranges, the product one sign
                lo, hi = add(lo, {m: c}), add(hi, {m: c})
                continue
            for k in m:
                if isinstance(self.nodes.get(k), _OPAQUE_VALUES) and (len(p) > 1 or len(m) > 1
                                                                      or c != 1):
                    # an opaque value's interval is its type's whole range: in a sum or a
                    # product it only yields an entry requirement that the bound does not
                    # overflow, which fails for any size (an access guard is the answer)
                    raise _Fail
                flo, fhi = self._atom_interval(k, reqs)
                if len(m) > 1 and not self._nonneg(flo):
                    raise _Fail
                self._spend(len(mlo) * len(flo) + len(mhi) * len(fhi))
                mlo, mhi = mul(mlo, flo), mul(mhi, fhi)
                if len(mlo) > MAX_TERMS or len(mhi) > MAX_TERMS:
                    raise _Fail
            if c > 0:
                lo, hi = add(lo, scale(mlo, c)), add(hi, scale(mhi, c))
            else:
                lo, hi = add(lo, scale(mhi, c)), add(hi, scale(mlo, c))
        return lo, hi

    def _atom_interval(self, key, reqs):
        if key in self.symbols:
            return {(key,): Fraction(1)}, {(key,): Fraction(1)}
        loop = self.loops.get(key)
        if loop is not None:
            reqs.extend(loop[2])
            return loop[0], loop[1]
        node = self.nodes.get(key)
        if node is None or key in self._open:
            raise _Fail  # unknown, or defined through itself (a let reading its own variable)
        self._open.add(key)
        try:
            return self._node_interval(node, reqs)
        finally:
            self._open.discard(key)

    def _operand(self, e, reqs, *within):
        """The interval of ``e``, checked to lie in its dtype's range and in the ranges of
        the dtypes of the expressions ``within`` (what C converts it to)."""
        lo, hi = self._interval(self._exact(e, reqs), reqs)
        lo_r, hi_r = common_range(e, *within)
        self._require(lo, lo_r, hi_r, reqs)
        self._require(hi, lo_r, hi_r, reqs)
        return lo, hi

    def _floordiv_lower(self, p, c):
        """A lower bound of ``floor(v / c)`` for ``v >= p``: ``floordiv_bound``'s when it is
        exact (integer coefficients), else 0 when ``p`` is nonnegative (a bound free of the
        ``n / c - (c - 1) / c`` kind), else ``floordiv_bound``'s fractional one."""
        q = floordiv_bound(p, c, True)
        if any(v.denominator != 1 for v in q.values()) and self._nonneg(p):
            return const(0)
        return q

    def _node_interval(self, e, reqs):
        if isinstance(e, (E.FloorDiv, E.FloorMod, E.Div, E.Mod)) and \
                not isinstance(e.b, E.IntImm):
            return self._symbolic_division(e, reqs)
        if isinstance(e, (E.FloorDiv, E.FloorMod, E.Div, E.Mod)):
            if not isinstance(e.b, E.IntImm) or e.b.value <= 0:
                raise _Fail
            c = e.b.value
            # The floor helpers take int64 operands; C's / and % convert to the common type.
            lo, hi = self._operand(e.a, reqs, e, e.b)
            if isinstance(e, (E.FloorDiv, E.FloorMod)):
                self._require(hi, *INT64, reqs)
            if isinstance(e, (E.Div, E.Mod)) and not self._nonneg(lo):
                raise _Fail
            if isinstance(e, (E.FloorMod, E.Mod)):
                return const(0), const(c - 1)
            return (self._floordiv_lower(lo, c),
                    floordiv_bound(hi, c, False))
        if isinstance(e, (E.Min, E.Max)):
            alo, ahi = self._operand(e.a, reqs, e, e.b)  # the helper takes e's C type
            blo, bhi = self._operand(e.b, reqs, e, e.a)
            want_min = isinstance(e, E.Min)
            # The bound on the side of the operation needs the provably smaller (larger) of
            # the two; on the other side either operand's bound holds.
            tight = self._pick(alo, blo, True) if want_min else self._pick(ahi, bhi, False)
            if tight is None:
                raise _Fail
            first, second = (ahi, bhi) if want_min else (alo, blo)
            loose = self._pick(first, second, want_min)
            if loose is None:
                loose = second if as_const(second) is not None else first
            return (tight, loose) if want_min else (loose, tight)
        if isinstance(e, E.Cast) and (e.value.dtype.is_int or e.value.dtype.is_uint):
            return self._operand(e.value, reqs, e)
        if isinstance(e, _OPAQUE_VALUES):
            # a value C computes in e's type (a loaded index, a select of two): somewhere in
            # that type's range, which a clamp (min/max with constants) narrows
            lo_r, hi_r = dtype_range(e.dtype)
            return const(lo_r), const(hi_r)
        raise _Fail

    def _symbolic_division(self, e, reqs):
        """``x // d`` and ``x % d`` for ``x >= 0`` and ``d`` a product of sizes the enclosing
        loops make positive (``_sizes_of_extent``): ``x % d`` in ``[0, d - 1]``; ``x // d`` in
        ``[0, q + floor(r / d)]`` for ``x <= q * d + r`` (``q`` with integer coefficients),
        where ``floor(r / d)`` is at most -1 for ``r < 0`` and at most ``r`` otherwise."""
        d = self._exact(e.b, reqs)
        if len(d) != 1:
            raise _Fail
        (m, c), = d.items()
        if not m or c < 1 or c.denominator != 1 or not all(self._is_positive(k) for k in m):
            raise _Fail
        lo, hi = self._operand(e.a, reqs, e, e.b)
        self._operand(e.b, reqs, e, e.a)
        self._require(hi, *INT64, reqs)
        if not self._nonneg(lo):
            raise _Fail
        if isinstance(e, (E.FloorMod, E.Mod)):
            return const(0), add(d, const(-1))
        quotient, r = {}, Fraction(0)
        for mono, coeff in hi.items():
            if not mono:
                r = coeff
                continue
            rest = list(mono)
            for k in m:
                if k not in rest:
                    raise _Fail
                rest.remove(k)
            q = coeff / c
            if q.denominator != 1:
                raise _Fail
            quotient = add(quotient, {tuple(rest): q})
        if r.denominator != 1:
            raise _Fail
        return const(0), add(quotient, const(-1 if r < 0 else r))

    def _pick(self, a, b, want_min):
        """The smaller (or larger) of two polynomials when provable, else None."""
        if self._nonneg(add(b, a, -1)):
            return a if want_min else b
        if self._nonneg(add(a, b, -1)):
            return b if want_min else a
        return None

    def symbol(self, key):
        """The variable of a symbol key (for rendering requirements)."""
        return self.symbols[key]
