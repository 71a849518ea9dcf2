"""Polynomial bounds for the C bounds prover (``rvm.codegen.c.bounds``).

A polynomial is ``{monomial: Fraction}``, a monomial a sorted tuple of atom keys (the
constant term's is ``()``), zero coefficients dropped. Also the value ranges of C's
integer types, which every intermediate of an index must stay within.
"""
from fractions import Fraction


def dtype_range(dtype):
    if dtype.is_bool:
        return 0, 1
    if dtype.is_uint:
        return 0, (1 << dtype.bits) - 1
    return -(1 << (dtype.bits - 1)), (1 << (dtype.bits - 1)) - 1


INT64 = (-(1 << 63), (1 << 63) - 1)


def common_range(*exprs):
    """The values every one of the dtypes of ``exprs`` holds (C converts among them)."""
    lo, hi = INT64[0], (1 << 64) - 1
    for e in exprs:
        e_lo, e_hi = dtype_range(e.dtype)
        lo, hi = max(lo, e_lo), min(hi, e_hi)
    return lo, hi


def const(c):
    return {(): Fraction(c)} if c else {}


def add(a, b, sign=1):
    out = dict(a)
    for m, c in b.items():
        v = out.get(m, 0) + sign * c
        if v:
            out[m] = v
        else:
            out.pop(m, None)
    return out


def mul(a, b):
    out = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            m = tuple(sorted(ma + mb))
            v = out.get(m, 0) + ca * cb
            if v:
                out[m] = v
            else:
                out.pop(m, None)
    return out


def scale(a, c):
    return {m: v * c for m, v in a.items()} if c else {}


def floordiv_bound(p, c, lower):
    """A bound of ``floor(v / c)`` for ``v`` bounded by ``p`` (below when ``lower``).

    When every coefficient of a symbol in ``p`` is an integer multiple of ``c``, ``p`` is
    ``c * q + r`` with ``q`` integer-valued (the symbols are integers) and the bound is
    exact, ``q + floor(r / c)``: a loop over ``[0, n * 64)`` gives ``i // 64 <= n - 1``.
    Otherwise ``p / c``, less ``(c - 1) / c`` below."""
    rest = {m: k for m, k in p.items() if m}
    r = p.get((), Fraction(0))
    if all(k.denominator == 1 and k.numerator % c == 0 for k in rest.values()) \
            and r.denominator == 1:
        return add(scale(rest, Fraction(1, c)), const(r.numerator // c))
    scaled = scale(p, Fraction(1, c))
    return add(scaled, const(Fraction(-(c - 1), c))) if lower else scaled


def as_const(p):
    if not p:
        return Fraction(0)
    if len(p) == 1 and () in p:
        return p[()]
    return None
