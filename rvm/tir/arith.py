"""An arithmetic simplifier for index expressions, and integer bounds.

Integer sums are put in a linear canonical form (``coeff * term + ... +
constant``, terms kept in order of first appearance), which folds nested
constants, ``x * 1``, ``x + 0``, ``x - x`` and ``(x + 1) * 2 - 2``. Division
and modulo by a constant use the bounds of the variables the Analyzer knows
(loop ranges): with ``0 <= j < 4``, ``(i * 4 + j) // 4 -> i`` and
``(i * 4 + j) % 4 -> j``; divisors may be products of symbolic extents
(``arith_poly`` bounds the operands). Float expressions are only constant-folded,
never reassociated, but for ``pow(x, n)`` of a small integer ``n``, which becomes
``x * ... * x``.

>>> from rvm.tir.expr import Var
>>> i = Var("i")
>>> simplify((i + 1) * 2 - 2)
i * 2
"""
import contextlib
import math

from rvm.ir.expr import PrimExpr
from rvm.ir.base import structural_equal
from rvm.tir import expr as _e
from rvm.tir import op as _op
from rvm.tir import arith_poly as _poly
from rvm.tir.arith_poly import Linear as _Linear, factors, is_int, product
from rvm.tir.free_vars import free_vars
from rvm.tir.stmt_functor import StmtExprMutator, post_order_visit


_is_int = is_int


class Analyzer:
    """Simplifies expressions and proves facts, knowing the ranges of bound variables.

    >>> from rvm.tir.expr import Var, Range
    >>> i, j = Var("i"), Var("j")
    >>> ana = Analyzer()
    >>> ana.bind(j, Range(0, 4))
    >>> ana.simplify((i * 4 + j) // 4)
    i
    """

    def __init__(self):
        self._ranges = {}
        self._symbolic_ranges = {}  # id(var) -> (min, extent) of a range not all constant
        self._quotients = 0  # bounds being simplified (arith_poly._quotient)
        self._simplified = {}  # _memo_key -> (expr, vars it depends on, simplified)

    def bind(self, var, value):
        """Declares ``var`` to range over ``value`` (a Range) or to equal an expression."""
        if isinstance(value, _e.Range):
            lo = self.const_int_bound(value.min)
            ext = self.const_int_bound(value.extent)
            if lo[0] is not None and ext[1] is not None and lo[1] is not None:
                self._ranges[id(var)] = (var, lo[0], lo[1] + ext[1] - 1)
            elif lo[0] is not None:
                self._ranges[id(var)] = (var, lo[0], None)
            if not (isinstance(value.min, _e.IntImm) and isinstance(value.extent, _e.IntImm)):
                self._symbolic_ranges[id(var)] = (value.min, value.extent)
        else:
            bound = self.const_int_bound(_op.convert(value))
            self._ranges[id(var)] = (var, bound[0], bound[1])

    def const_int_bound(self, expr):
        """(lower, upper) integer bounds of ``expr``; None where unknown."""
        expr = _op.convert(expr)
        if isinstance(expr, _e.IntImm):
            return expr.value, expr.value
        if isinstance(expr, _e.Var):
            known = self._ranges.get(id(expr))
            if known is not None:
                return known[1], known[2]
            return (0 if isinstance(expr, _e.SizeVar) else None), None
        if not _is_int(expr.dtype):
            return None, None
        linear = self._linear(expr)
        if linear is not None and not (len(linear.terms) == 1 and linear.terms[0][0] is expr):
            lo = hi = linear.const
            for term, coeff in linear.live_terms():
                tlo, thi = self.const_int_bound(term)
                if coeff < 0:
                    tlo, thi = thi, tlo
                lo = None if lo is None or tlo is None else lo + coeff * tlo
                hi = None if hi is None or thi is None else hi + coeff * thi
            return lo, hi
        return self._atom_bound(expr)

    def _atom_bound(self, expr):
        if isinstance(expr, (_e.FloorDiv, _e.FloorMod)) and isinstance(expr.b, _e.IntImm) \
                and expr.b.value > 0:
            c = expr.b.value
            lo, hi = self.const_int_bound(expr.a)
            if isinstance(expr, _e.FloorMod):
                if lo is not None and hi is not None and lo // c == hi // c:
                    return lo % c, hi % c
                return 0, c - 1
            return (None if lo is None else lo // c), (None if hi is None else hi // c)
        if isinstance(expr, (_e.Min, _e.Max)):
            (alo, ahi), (blo, bhi) = self.const_int_bound(expr.a), self.const_int_bound(expr.b)
            pick = min if isinstance(expr, _e.Min) else max
            lo = None if alo is None or blo is None else pick(alo, blo)
            hi = None if ahi is None or bhi is None else pick(ahi, bhi)
            if isinstance(expr, _e.Min) and lo is None and alo is not None and blo is not None:
                lo = min(alo, blo)
            return lo, hi
        if isinstance(expr, _e.Cast):
            return self.const_int_bound(expr.value)
        return None, None

    def _linear(self, expr):
        """The linear form of an already simplified integer expression."""
        if not isinstance(expr, PrimExpr) or not _is_int(expr.dtype):
            return None
        if isinstance(expr, _e.IntImm):
            return _Linear(expr.dtype, const=expr.value)
        if isinstance(expr, (_e.Add, _e.Sub)):
            a, b = self._linear(expr.a), self._linear(expr.b)
            return a.combine(b, 1 if isinstance(expr, _e.Add) else -1)
        if isinstance(expr, _e.Mul):
            a, b = self._linear(expr.a), self._linear(expr.b)
            if not b.live_terms():
                return a.scale(b.const)
            if not a.live_terms():
                return b.scale(a.const)
            a_mono, b_mono = a.monomial(), b.monomial()
            if a_mono is not None and b_mono is not None and (a_mono[0] != 1 or b_mono[0] != 1):
                # (x * 2) * y: one term x * y, coefficient 2
                term = _e.Mul(product(a_mono[1], expr.dtype), product(b_mono[1], expr.dtype))
                return _Linear(expr.dtype, [[term, a_mono[0] * b_mono[0]]])
        out = _Linear(expr.dtype)
        out.add_term(expr, 1)
        return out

    @contextlib.contextmanager
    def assume_nonempty(self, extents):
        """Within: each of ``extents`` is at least 1, as inside a loop over it that runs. An
        extent that is a positive multiple of a product of non-negative variables
        (``s72 * s70 * 8``) then makes each of them at least 1, which divisions by them
        need (``(s72 * s70 - 1) // s70 == s72 - 1`` only when ``s70 >= 1``)."""
        saved = {}
        for extent in extents:
            mono = self._linear(extent).monomial() if _is_int(extent.dtype) else None
            if mono is None or mono[0] <= 0:
                continue
            for f in mono[1]:
                known = self._ranges.get(id(f))
                if isinstance(f, _e.Var) and known is not None and known[1] is not None \
                        and known[1] >= 0 and (known[2] is None or known[2] >= 1):
                    saved.setdefault(id(f), known)
                    self._ranges[id(f)] = (f, max(known[1], 1), known[2])
        try:
            yield
        finally:
            self._ranges.update(saved)

    def simplify(self, expr):
        """``expr`` (an expression or statement) with every expression simplified.

        Integer expressions and conditions are remembered: one structurally equal to an
        expression simplified before, over variables whose known ranges are the same as
        then, gets the same result (passes simplify the same index many times)."""
        return _Simplifier(self).visit(expr)

    def _remembered(self, expr, compute):
        """``compute(expr)``, or what it gave for an equal expression in the same state."""
        depends = {}
        key = _memo_key(self, expr, depends)
        if key is None:
            return compute(expr)
        found = self._simplified.get(key)
        if found is not None:
            # an expression left as it was is returned itself, as a first simplification does
            return expr if found[2] is found[0] else found[2]
        out = compute(expr)
        if len(self._simplified) >= MEMO_SIZE:
            self._simplified.clear()
        self._simplified[key] = (expr, list(depends.values()), out)
        return out

    def can_prove(self, cond):
        """Whether ``cond`` is provably true."""
        cond = self.simplify(_op.convert(cond))
        return isinstance(cond, _e.IntImm) and bool(cond.value)

    def can_prove_equal(self, a, b):
        """Whether ``a == b`` provably (their difference simplifies to zero)."""
        diff = self.simplify(_op.subtract(a, b))
        return isinstance(diff, (_e.IntImm, _e.FloatImm)) and diff.value == 0


# Expressions simplify remembers, and the nodes their keys may hold.
_MEMO_TYPES = (_e.Add, _e.Sub, _e.Mul, _e.FloorDiv, _e.FloorMod, _e.Min, _e.Max, _e.EQ,
               _e.NE, _e.LT, _e.LE, _e.GT, _e.GE, _e.And, _e.Or, _e.Not, _e.Cast, _e.Var,
               _e.IntImm)
# Expressions remembered at the top (variables and constants are as quick to simplify).
_MEMO_ROOTS = frozenset(_MEMO_TYPES) - {_e.Var, _e.IntImm}
# Results one Analyzer remembers before it starts afresh.
MEMO_SIZE = 8192


def _expr_key(expr, depends):
    """A structural key of an expression made of ``_MEMO_TYPES`` nodes (variables by
    identity, added to ``depends``), or None for one holding another node."""
    kind = type(expr)
    if kind is _e.IntImm:
        return (_e.IntImm, expr.dtype, expr.value)
    if kind is _e.Var or kind is _e.SizeVar:
        depends[id(expr)] = expr
        return id(expr)
    if kind is _e.Cast:
        inner = _expr_key(expr.value, depends)
        return None if inner is None else (_e.Cast, expr.dtype, inner)
    if kind is _e.Not:
        inner = _expr_key(expr.a, depends)
        return None if inner is None else (_e.Not, inner)
    if kind not in _MEMO_TYPES:
        return None
    a = _expr_key(expr.a, depends)
    if a is None:
        return None
    b = _expr_key(expr.b, depends)
    return None if b is None else (kind, a, b)


def _memo_key(analyzer, expr, depends):
    """The key of simplifying ``expr`` in the analyzer's present state: its structure and
    what the analyzer knows of each variable it depends on (its constant bounds and
    symbolic range, and, in turn, the variables of that range); None when ``expr`` is not
    remembered."""
    key = _expr_key(expr, depends)
    if key is None:
        return None
    facts, done, todo = [], set(), list(depends.values())
    while todo:
        var = todo.pop()
        if id(var) in done:
            continue
        done.add(id(var))
        known = analyzer._ranges.get(id(var))
        bounds = None if known is None else (known[1], known[2])
        symbolic = analyzer._symbolic_ranges.get(id(var))
        if symbolic is not None:
            before = len(depends)
            parts = (_expr_key(symbolic[0], depends), _expr_key(symbolic[1], depends))
            if None in parts:
                return None
            todo.extend(list(depends.values())[before:])
            symbolic = parts
        facts.append((id(var), bounds, symbolic))
    return key, tuple(facts), analyzer._quotients


_CMP = {_e.EQ: lambda lo, hi: (lo == 0 == hi, lo > 0 or hi < 0),
        _e.NE: lambda lo, hi: (lo > 0 or hi < 0, lo == 0 == hi),
        _e.LT: lambda lo, hi: (hi < 0, lo >= 0),
        _e.LE: lambda lo, hi: (hi <= 0, lo > 0),
        _e.GT: lambda lo, hi: (lo > 0, hi <= 0),
        _e.GE: lambda lo, hi: (lo >= 0, hi < 0)}
_BUILD = {_e.FloorDiv: _op.floordiv, _e.FloorMod: _op.floormod, _e.Div: _op.div,
          _e.Mod: _op.truncmod, _e.Min: _op.min, _e.Max: _op.max, _e.And: _op.logical_and,
          _e.Or: _op.logical_or}


class _Simplifier(StmtExprMutator):
    def __init__(self, analyzer):
        self.ana = analyzer
        self._inside = 0  # depth in an expression being remembered

    def visit_expr(self, expr):
        if self._inside or type(expr) not in _MEMO_ROOTS or \
                not (_is_int(expr.dtype) or expr.dtype.is_bool):
            return super().visit_expr(expr)
        return self.ana._remembered(expr, self._visit_remembered)

    def _visit_remembered(self, expr):
        self._inside += 1
        try:
            return super().visit_expr(expr)
        finally:
            self._inside -= 1

    def _linear_rebuild(self, op):
        op = self._generic(op)
        if not _is_int(op.dtype):
            return _rebuild_folded(op)
        linear = _merge_div_mod(self.ana._linear(op), self.ana)
        return linear.to_expr()

    visit_add_ = visit_sub_ = visit_mul_ = _linear_rebuild

    def _divmod(self, op):
        op = self._generic(op)
        simple = _BUILD[type(op)](op.a, op.b)
        if not isinstance(simple, type(op)) or not _is_int(op.dtype):
            return simple
        if isinstance(op.b, _e.IntImm):
            out = self._divmod_const(op, op.b.value) if op.b.value > 0 else None
        else:
            out = self._divmod_symbolic(op)
        return simple if out is None else out

    def _divmod_const(self, op, c):
        is_div = isinstance(op, _e.FloorDiv)
        inner = op.a
        if isinstance(inner, type(op)) and isinstance(inner.b, _e.IntImm) and inner.b.value > 0:
            if is_div:  # (x // a) // c == x // (a * c)
                return self.visit(_e.FloorDiv(inner.a, _op.const(inner.b.value * c, op.dtype)))
            if inner.b.value % c == 0:  # (x % a) % c == x % c when c divides a
                return self.visit(_e.FloorMod(inner.a, op.b))
        linear = self.ana._linear(op.a)
        divisible, rest = _split_multiples(linear, c)
        if self._below(rest, c):
            return _scaled_down(divisible, c) if is_div else rest.to_expr()
        # (a * m + b) // c == a // (c / m) when m divides c and 0 <= b < m
        for m in sorted({math.gcd(coeff, c) for _, coeff in rest.live_terms()}, reverse=True):
            if m in (1, c):
                continue
            high, low = _split_multiples(rest, m)
            if not high.live_terms() or not self._below(low, m):
                continue
            kind = type(op)
            part = self.visit(kind(_scaled_down(high, m), _op.const(c // m, op.dtype)))
            if is_div:
                return _op.add(_scaled_down(divisible, c), part)
            return self.visit(_e.Add(_e.Mul(part, _op.const(m, op.dtype)), low.to_expr()))
        if divisible.live_terms() or divisible.const:
            # (c * q + r) // c == q + r // c and (c * q + r) % c == r % c, for every r
            part = self.visit(type(op)(rest.to_expr(), op.b))
            return _op.add(_scaled_down(divisible, c), part) if is_div else part
        return None

    def _below(self, rest, c):
        """Whether ``0 <= rest < c`` (a Linear, a constant ``c``) provably."""
        if not rest.live_terms():
            return 0 <= rest.const < c
        lo, hi = self.ana.const_int_bound(rest.to_expr())
        if lo is not None and hi is not None:
            return 0 <= lo and hi < c
        return _poly.in_range(self.ana, rest, _Linear(rest.dtype, const=c))

    def _divmod_symbolic(self, op):
        """Division by a product of symbols ``d`` (``s70 * s72``), provably positive: terms
        that are multiples of ``d`` divide exactly, and a rest in ``[0, d)`` is the modulo."""
        divisor = self.ana._linear(op.b)
        mono = divisor.monomial()
        if mono is None or mono[0] <= 0 or not _poly.positive(self.ana, divisor):
            return None
        d_coeff, d_factors = mono
        linear = self.ana._linear(op.a)
        divisible = _Linear(op.dtype)
        rest = _Linear(op.dtype, const=linear.const)
        for term, coeff in linear.live_terms():
            left = _poly.remove_factors(factors(term), d_factors)
            if left is None or coeff % d_coeff:
                rest.add_term(term, coeff)
            elif left:
                divisible.add_term(product(left, op.dtype), coeff // d_coeff)
            else:
                divisible.const += coeff // d_coeff
        is_div = isinstance(op, _e.FloorDiv)
        for below in (0, -1):
            if _poly.in_range(self.ana, rest, divisor, below):
                if is_div:
                    divisible.const += below
                    return divisible.to_expr()
                return rest.combine(divisor.scale(-below)).to_expr()
        if divisible.live_terms() or divisible.const:
            part = self.visit(type(op)(rest.to_expr(), op.b))
            return _op.add(divisible.to_expr(), part) if is_div else part
        return None

    visit_floor_div_ = visit_floor_mod_ = _divmod

    def _fold(self, op):
        return _rebuild_folded(self._generic(op))

    visit_div_ = visit_mod_ = visit_and_ = visit_or_ = _fold

    def _minmax(self, op):
        op = self._generic(op)
        if structural_equal(op.a, op.b, map_free_vars=False):
            return op.a
        if _is_int(op.dtype):
            diff = self.ana._linear(_e.Sub(op.a, op.b)).to_expr()
            dlo, dhi = self.ana.const_int_bound(diff)
            if dhi is not None and dhi <= 0:
                return op.a if isinstance(op, _e.Min) else op.b
            if dlo is not None and dlo >= 0:
                return op.b if isinstance(op, _e.Min) else op.a
        return _rebuild_folded(op)

    visit_min_ = visit_max_ = _minmax

    def _compare(self, op):
        op = self._generic(op)
        if _is_int(op.a.dtype):
            diff = self.ana._linear(_e.Sub(op.a, op.b)).to_expr()
            lo, hi = self.ana.const_int_bound(diff)
            if lo is not None and hi is not None:
                true, false = _CMP[type(op)](lo, hi)
                if true or false:
                    return _e.IntImm("bool", true)
            elif structural_equal(op.a, op.b, map_free_vars=False):
                return _e.IntImm("bool", type(op) in (_e.EQ, _e.LE, _e.GE))
        return _rebuild_folded(op)

    visit_eq_ = visit_ne_ = visit_lt_ = visit_le_ = visit_gt_ = visit_ge_ = _compare

    def visit_not_(self, op):
        op = self._generic(op)
        return _op.logical_not(op.a)

    def visit_cast_(self, op):
        op = self._generic(op)
        return _op.cast(op.value, op.dtype)

    def visit_select_(self, op):
        op = self._generic(op)
        if isinstance(op.condition, _e.IntImm):
            return op.true_value if op.condition.value else op.false_value
        return op

    def visit_call_(self, op):
        op = self._generic(op)
        if op.op == "tir.if_then_else" and isinstance(op.args[0], _e.IntImm):
            return op.args[1] if op.args[0].value else op.args[2]
        if op.op == "tir.pow":
            return _small_power(op)
        return op

    def visit_for_(self, op):
        self.ana.bind(op.loop_var, _e.Range.from_min_extent(op.min, op.extent))
        with self.ana.assume_nonempty([op.extent]):
            return self._generic(op)

    def visit_block_realize_(self, op):
        extents = []
        for iv in op.block.iter_vars:
            if iv.dom is not None:
                self.ana.bind(iv.var, iv.dom)
                extents.append(iv.dom.extent)
        with self.ana.assume_nonempty(extents):
            return self._generic(op)


# pow(x, n) for these exponents is x multiplied n times: a libm pow costs tens of times
# more (GPT-2's GELU, 0.5 * x * (1 + tanh(c * (x + 0.044715 * pow(x, 3)))), spent most of
# its time in powf), and the products round at most n - 1 times where pow rounds once.
SMALL_POWERS = (1, 2, 3, 4)


def _small_power(call):
    """``pow(x, n)`` as ``x * ... * x`` for a float ``x`` free of calls and ``n`` in
    SMALL_POWERS (``x`` is then evaluated n times: loads and arithmetic only); else
    ``call``."""
    x, n = call.args
    if not (call.dtype.is_float and isinstance(n, _e.FloatImm) and n.value in SMALL_POWERS):
        return call
    found = []
    post_order_visit(x, lambda node: found.append(node) if isinstance(node, _e.Call) else None)
    if found:
        return call
    if n.value == 4:
        return _e.Mul(_e.Mul(x, x), _e.Mul(x, x))
    out = x
    for _ in range(int(n.value) - 1):
        out = _e.Mul(out, x)
    return out


def _merge_div_mod(linear, analyzer):
    """Folds ``(x // d) * (k * d) + (x % d) * k`` into ``x * k`` (fused loop indices), ``d``
    a constant or a product of symbols; ``x // (a * c)`` stands for ``(x // a) // c``; and
    ``(x // d) % e * (k * d) + (x % d) * k`` into ``(x % (d * e)) * k`` (constants)."""
    terms = linear.live_terms()
    for mod_term, k in terms:
        if not isinstance(mod_term, _e.FloorMod):
            continue
        divisor = _divisor_monomial(mod_term.b, analyzer)
        if divisor is None:
            continue
        for div_term, k2 in terms:
            if k2 != k * divisor[0] or not _is_div_times(div_term, mod_term, divisor[1]):
                continue
            rest = _Linear(linear.dtype, const=linear.const)
            for term, coeff in terms:
                if term is not mod_term and term is not div_term:
                    rest.add_term(term, coeff)
            merged = rest.combine(analyzer._linear(mod_term.a).scale(k))
            return _merge_div_mod(merged, analyzer)
        for high, k2 in terms:
            if isinstance(high, _e.FloorMod) and isinstance(high.b, _e.IntImm) and \
                    isinstance(mod_term.b, _e.IntImm) and high.b.value > 0 and \
                    k2 == k * mod_term.b.value and isinstance(high.a, _e.FloorDiv) and \
                    structural_equal(high.a.a, mod_term.a, map_free_vars=False) and \
                    structural_equal(high.a.b, mod_term.b, map_free_vars=False):
                # (x // d) % e * (k * d) + (x % d) * k == (x % (d * e)) * k
                rest = _Linear(linear.dtype, const=linear.const)
                for term, coeff in terms:
                    if term is not mod_term and term is not high:
                        rest.add_term(term, coeff)
                wide = _op.const(mod_term.b.value * high.b.value, linear.dtype)
                merged = rest.combine(analyzer._linear(
                    analyzer.simplify(_e.FloorMod(mod_term.a, wide))).scale(k))
                return _merge_div_mod(merged, analyzer)
    return linear


def _divisor_monomial(d, analyzer):
    """``(coeff, factors)`` of a positive divisor: a constant, or a coefficient times a
    product of symbols."""
    if isinstance(d, _e.IntImm):
        return (d.value, []) if d.value > 0 else None
    mono = analyzer._linear(d).monomial()
    return mono if mono is not None and mono[0] > 0 else None


def _is_div_times(term, mod_term, d_factors):
    """Whether ``term`` is ``(x // d) * <d_factors>`` for ``mod_term`` = ``x % d``."""
    fs = factors(term)
    for index, f in enumerate(fs):
        if isinstance(f, _e.FloorDiv) and _same_quotient(f, mod_term) and \
                _poly.remove_factors(fs[:index] + fs[index + 1:], d_factors) == []:
            return True
    return False


def _same_quotient(div, mod):
    """Whether ``div`` is ``x // d`` for ``mod`` = ``x % d``, or ``x // (a * d)`` for
    ``mod`` = ``(x // a) % d`` (constants ``a`` and ``d``)."""
    if structural_equal(div.a, mod.a, map_free_vars=False) and \
            structural_equal(div.b, mod.b, map_free_vars=False):
        return True
    inner = mod.a
    return isinstance(inner, _e.FloorDiv) and isinstance(inner.b, _e.IntImm) and \
        isinstance(mod.b, _e.IntImm) and isinstance(div.b, _e.IntImm) and \
        inner.b.value > 0 and div.b.value == inner.b.value * mod.b.value and \
        structural_equal(div.a, inner.a, map_free_vars=False)


def _split_multiples(linear, c):
    """``(multiples, rest)``: the terms of ``linear`` whose coefficients are multiples of
    ``c`` and the others; the constant split into a multiple of ``c`` and ``const % c``."""
    multiples = _Linear(linear.dtype, const=linear.const - linear.const % c)
    rest = _Linear(linear.dtype, const=linear.const % c)
    for term, coeff in linear.live_terms():
        (multiples if coeff % c == 0 else rest).add_term(term, coeff)
    return multiples, rest


def _scaled_down(linear, c):
    return _Linear(linear.dtype, [[t, k // c] for t, k in linear.live_terms()],
                   linear.const // c).to_expr()


def _rebuild_folded(op):
    """The node rebuilt through the folding operator builders, when there is one."""
    build = _BUILD.get(type(op))
    if build is not None:
        return build(op.a, op.b)
    if isinstance(op, (_e.Add, _e.Sub, _e.Mul)):
        return {_e.Add: _op.add, _e.Sub: _op.subtract, _e.Mul: _op.multiply}[type(op)](op.a, op.b)
    return op


def simplify(expr, analyzer=None):
    """``expr`` simplified (a PrimExpr or a statement); see the module docstring.

    >>> from rvm.tir.expr import Var
    >>> simplify(Var("x") * 1 + 0 + 3 - 1)
    x + 2
    """
    return (analyzer or Analyzer()).simplify(expr)


# tensor sizes: symbolic dimensions range over [0, 2 ** 62)
_SIZE_RANGE = (0, 1 << 62)


def simplify_size(expr):
    """``expr`` (an integer expression of tensor dimensions) simplified knowing that its
    variables are sizes, so non-negative: ``min(n, 2 ** 63 - 1)`` becomes ``n``.

    >>> from rvm.tir.expr import Var
    >>> n = Var("n", "int64")
    >>> simplify_size(_op.max(_op.min(_op.const(0, "int64"), n), n))
    n
    """
    analyzer = Analyzer()
    low, high = (_op.const(v, expr.dtype) for v in _SIZE_RANGE)
    for var in free_vars(expr):
        analyzer.bind(var, _e.Range(low, high))
    return analyzer.simplify(expr)
