"""Integer sums of monomials, and their symbolic bounds: what rvm.tir.arith proves with.

A ``Linear`` is ``sum(coeff * term) + const``; a term is a product of factors
(``i``, ``s70 * s72``, ``x // 4``) compared as a multiset, so ``s70 * s72`` and
``s72 * s70`` are one term. ``symbolic_bound`` bounds an expression by two such
sums over *symbols* (variables without a range: tensor dimensions, parameters),
replacing each loop variable by its range, so that with ``0 <= j < a`` and
``0 <= k < b`` (``a``, ``b`` symbolic) the upper bound of ``j * b + k`` is
``a * b - 1``; ``nonneg`` then decides the sign of such a sum from the constant
bounds of its factors (a dimension is never negative). Everything here is exact
integer arithmetic: a bound that cannot be derived is None, never a guess.
"""
from rvm.ir.base import structural_equal
from rvm.tir import expr as _e
from rvm.tir import op as _op

# Depth of nested ranges and divisions followed by one bound (a loop whose extent reads
# another loop's variable, ...): index expressions of real kernels need a handful.
MAX_DEPTH = 12
# A loop whose constant range is wider than this is a parameter bound (the whole range of
# its dtype, as Simplify gives tensor dimensions), not a loop: it stays a symbol.
MAX_LOOP_EXTENT = 1 << 40


def is_int(dtype):
    """Whether ``dtype`` is a scalar integer type."""
    return (dtype.is_int or dtype.is_uint) and dtype.lanes == 1


def factors(term):
    """The factors of a product ``term`` (Mul nodes flattened), outermost first."""
    out, stack = [], [term]
    while stack:
        node = stack.pop()
        if isinstance(node, _e.Mul) and is_int(node.dtype):
            stack += [node.b, node.a]
        else:
            out.append(node)
    return out


def _same_product(fa, fb):
    if len(fa) != len(fb):
        return False
    if len(fa) == 1:
        return structural_equal(fa[0], fb[0], map_free_vars=False)
    return remove_factors(fa, fb) == []


def remove_factors(fs, wanted):
    """``fs`` without the factors of ``wanted`` (as a multiset), or None when one is missing."""
    rest = list(fs)
    for w in wanted:
        for index, f in enumerate(rest):
            if f is w or structural_equal(f, w, map_free_vars=False):
                del rest[index]
                break
        else:
            return None
    return rest


def product(fs, dtype):
    """The product of the factors ``fs`` (1 when there are none)."""
    out = None
    for f in fs:
        out = f if out is None else _e.Mul(out, f)
    return _op.const(1, dtype) if out is None else out


class Linear:
    """``sum(coeff * term) + const`` over integer terms (products of factors)."""

    def __init__(self, dtype, terms=None, const=0):
        self.dtype = dtype
        self.terms = []  # [term, coeff] pairs, in order of first appearance
        self.const = const
        for term, coeff in terms or ():
            self.add_term(term, coeff)

    def add_term(self, term, coeff):
        fs = factors(term)
        for pair in self.terms:
            if pair[0] is term or _same_product(factors(pair[0]), fs):
                pair[1] += coeff
                return
        self.terms.append([term, coeff])

    def combine(self, other, sign=1):
        out = Linear(self.dtype, [list(p) for p in self.terms], self.const + sign * other.const)
        for term, coeff in other.terms:
            out.add_term(term, sign * coeff)
        return out

    def scale(self, factor):
        return Linear(self.dtype, [[t, c * factor] for t, c in self.terms], self.const * factor)

    def times(self, other):
        """The product of two sums, multiplied out."""
        out = Linear(self.dtype, const=self.const * other.const)
        for term, coeff in self.live_terms():
            out.add_term(term, coeff * other.const)
        for term, coeff in other.live_terms():
            out.add_term(term, coeff * self.const)
            for mine, own in self.live_terms():
                out.add_term(_e.Mul(mine, term), own * coeff)
        return out

    def live_terms(self):
        return [(t, c) for t, c in self.terms if c != 0]

    def monomial(self):
        """``(coeff, factors)`` when this is one term times a coefficient, else None."""
        live = self.live_terms()
        if len(live) != 1 or self.const:
            return None
        return live[0][1], factors(live[0][0])

    def to_expr(self):
        positive = [(t, c) for t, c in self.live_terms() if c > 0]
        negative = [(t, -c) for t, c in self.live_terms() if c < 0]
        result = None
        for term, coeff in positive:
            part = term if coeff == 1 else _e.Mul(term, _op.const(coeff, self.dtype))
            result = part if result is None else _e.Add(result, part)
        if result is None and negative:
            term, coeff = negative.pop(0)
            result = _e.Mul(term, _op.const(-coeff, self.dtype))
        for term, coeff in negative:
            part = term if coeff == 1 else _e.Mul(term, _op.const(coeff, self.dtype))
            result = _e.Sub(result, part)
        if result is None:
            return _op.const(self.const, self.dtype)
        if self.const > 0:
            return _e.Add(result, _op.const(self.const, self.dtype))
        if self.const < 0:
            return _e.Sub(result, _op.const(-self.const, self.dtype))
        return result


def nonneg(ana, linear):
    """Whether ``linear`` is provably >= 0, from the constant bounds of its factors."""
    if linear is None:
        return False
    low = linear.const
    for term, coeff in linear.live_terms():
        fs = factors(term)
        bounds = [ana.const_int_bound(f) for f in fs]
        if len(fs) == 1:
            lo, hi = bounds[0]
        else:
            if any(lo is None or lo < 0 for lo, _ in bounds):
                return False
            lo, hi = 1, 1
            for f_lo, f_hi in bounds:
                lo *= f_lo
                hi = None if hi is None or f_hi is None else hi * f_hi
        edge = lo if coeff > 0 else hi
        if edge is None:
            return False
        low += coeff * edge
    return low >= 0


def symbolic_bound(ana, expr, depth=0):
    """``(lo, hi)``: Linear sums over symbols bounding the integer ``expr`` (see the module
    docstring), each None when not derived."""
    if depth > MAX_DEPTH:
        return None, None
    if isinstance(expr, _e.IntImm):
        exact = Linear(expr.dtype, const=expr.value)
        return exact, exact
    if isinstance(expr, _e.Var):
        return _var_bound(ana, expr, depth)
    linear = ana._linear(expr)
    live = linear.live_terms()
    if len(live) == 1 and linear.const == 0 and live[0][1] == 1 and live[0][0] is expr:
        return _atom_bound(ana, expr, depth)
    return linear_bound(ana, linear, depth)


def linear_bound(ana, linear, depth=0):
    """``(lo, hi)`` of a Linear, from the bounds of its terms."""
    lo = Linear(linear.dtype, const=linear.const)
    hi = Linear(linear.dtype, const=linear.const)
    for term, coeff in linear.live_terms():
        t_lo, t_hi = symbolic_bound(ana, term, depth + 1)
        if coeff < 0:
            t_lo, t_hi = t_hi, t_lo
        lo = None if lo is None or t_lo is None else lo.combine(t_lo.scale(coeff))
        hi = None if hi is None or t_hi is None else hi.combine(t_hi.scale(coeff))
    return lo, hi


def _var_bound(ana, var, depth):
    exact = Linear(var.dtype, [[var, 1]])
    symbolic = ana._symbolic_ranges.get(id(var))
    if symbolic is not None:
        start, extent = symbolic
        lo = symbolic_bound(ana, start, depth + 1)[0]
        last = ana._linear(start).combine(ana._linear(extent))
        last.const -= 1
        hi = linear_bound(ana, last, depth + 1)[1]
        return lo, hi
    lo, hi = ana.const_int_bound(var)
    if lo is None or hi is None or hi - lo > MAX_LOOP_EXTENT:
        return exact, exact  # a symbol: its own bound
    return Linear(var.dtype, const=lo), Linear(var.dtype, const=hi)


def _atom_bound(ana, expr, depth):
    exact = Linear(expr.dtype, [[expr, 1]])
    if isinstance(expr, _e.Mul):
        bounds = [symbolic_bound(ana, f, depth + 1) for f in factors(expr)]
        if any(lo is None or hi is None or not nonneg(ana, lo) for lo, hi in bounds):
            return exact, exact
        lo, hi = bounds[0]
        for f_lo, f_hi in bounds[1:]:
            lo, hi = lo.times(f_lo), hi.times(f_hi)
        return lo, hi
    if isinstance(expr, (_e.FloorDiv, _e.FloorMod)):
        return _divmod_bound(ana, expr, depth)
    return exact, exact


def _divmod_bound(ana, expr, depth):
    exact = Linear(expr.dtype, [[expr, 1]])
    divisor = ana._linear(expr.b)
    if not positive(ana, divisor):
        return exact, exact
    a_lo, a_hi = symbolic_bound(ana, expr.a, depth + 1)
    if isinstance(expr, _e.FloorMod):
        if a_lo is not None and a_hi is not None and nonneg(ana, a_lo) \
                and nonneg(ana, _minus_one(divisor.combine(a_hi, -1))):
            return a_lo, a_hi  # already in [0, divisor)
        top = _minus_one(divisor)
        return Linear(expr.dtype), top
    lo = hi = None
    if a_lo is not None:
        lo = _quotient(ana, a_lo, expr.b)
        if lo is None and nonneg(ana, a_lo):
            lo = Linear(expr.dtype)
    if a_hi is not None:
        hi = _quotient(ana, a_hi, expr.b)
        if hi is None and a_lo is not None and nonneg(ana, a_lo):
            hi = a_hi  # x // d <= x for x >= 0 and d >= 1
    return lo, hi


def _minus_one(linear):
    out = linear.combine(Linear(linear.dtype))
    out.const -= 1
    return out


# Simplifications of a bound's quotient nested in one another (the quotient's own
# divisions are bounded in turn): a guard against cycles, not a limit real indices reach.
MAX_NESTED_QUOTIENTS = 4


def _quotient(ana, linear, divisor):
    """``linear // divisor`` as a Linear over symbols when it simplifies to one, else None."""
    if ana._quotients >= MAX_NESTED_QUOTIENTS:
        return None
    ana._quotients += 1
    try:
        quotient = ana.simplify(_e.FloorDiv(linear.to_expr(), divisor))
    finally:
        ana._quotients -= 1
    out = ana._linear(quotient)
    if any(_has_division(f) for t, _ in out.live_terms() for f in factors(t)):
        return None
    return out


def _has_division(expr):
    return isinstance(expr, (_e.FloorDiv, _e.FloorMod, _e.Div, _e.Mod))


def positive(ana, linear):
    """Whether ``linear`` is provably >= 1."""
    return nonneg(ana, _minus_one(linear))


def in_range(ana, rest, divisor, below=0):
    """Whether ``below * divisor <= rest < (below + 1) * divisor`` provably (Linear sums;
    ``divisor`` provably positive)."""
    lo, hi = linear_bound(ana, rest)
    if lo is None or hi is None:
        return False
    return nonneg(ana, lo.combine(divisor.scale(below), -1)) \
        and nonneg(ana, _minus_one(divisor.scale(below + 1).combine(hi, -1)))
