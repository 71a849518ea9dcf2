"""Division and modulo by symbolic extents, with loop ranges over products of symbols (the
index arithmetic of reshapes of tensors with dynamic dimensions)."""
import random
import re

import pytest

from rvm import tir
from rvm.tir.arith import Analyzer
from tests.tir.evaluator import _Machine


def _sizes(*names):
    return [tir.Var(n, "int64") for n in names]


def _c(v):
    return tir.const(v, "int64")


def _analyzer(sizes, loops):
    """An Analyzer where ``sizes`` are non-negative and each (var, extent) of ``loops``
    ranges over [0, extent)."""
    ana = Analyzer()
    for s in sizes:
        ana.bind(s, tir.Range(_c(0), _c((1 << 62))))
    for var, extent in loops:
        ana.bind(var, tir.Range.from_min_extent(_c(0), extent))
    return ana


def _text(expr):
    """``expr`` printed, int64 constants as plain numbers."""
    return re.sub(r"T\.int64\((-?\d+)\)", r"\1", repr(expr))


def _value(expr, env):
    machine = _Machine({})
    machine.env = env
    return machine.expr(expr)


def test_sum_of_products_modulo_and_division_by_a_product():
    a, b = _sizes("a", "b")
    i, j, k = (tir.Var(n, "int64") for n in "ijk")
    ana = _analyzer([a, b], [(j, a), (k, b)])
    index = i * (a * b) + j * b + k
    with ana.assume_nonempty([a, b]):  # inside loops over j and k
        assert _text(ana.simplify(tir.FloorMod(index, a * b))) == "j * b + k"
        assert ana.simplify(tir.FloorDiv(index, b * a)) is i
        assert _text(ana.simplify(tir.FloorMod(j * b + k, b))) == "k"
        assert ana.simplify(tir.FloorDiv(j * b + k, b)) is j


def test_nothing_is_assumed_of_an_index_without_a_range():
    a, b = _sizes("a", "b")
    i, j, k = (tir.Var(n, "int64") for n in "ijk")
    ana = _analyzer([a, b], [(j, a)])  # k has no range
    with ana.assume_nonempty([a, b]):
        out = ana.simplify(tir.FloorMod(j * b + k, a * b))
    assert isinstance(out, tir.FloorMod)
    # k outside [0, b): the kept expression is still right, the rewrite would not be
    env = {id(a): 3, id(b): 4, id(j): 2, id(k): 9}
    assert _value(out, env) == (2 * 4 + 9) % 12
    assert (2 * 4 + 9) != (2 * 4 + 9) % 12


def test_a_quotient_range_follows_a_loop_over_a_product():
    s70, s72 = _sizes("s70", "s72")
    fused, lane = tir.Var("fused", "int64"), tir.Var("lane", "int64")
    ana = _analyzer([s70, s72], [(fused, s72 * s70 * _c(8)), (lane, _c(64))])
    r = tir.FloorDiv(fused * _c(64) + lane, _c(512))
    assert _text(ana.simplify(r)) == "fused // 8"
    # GPT-2's GELU read its input through this index (a reshape of a reshape):
    row = tir.FloorMod(tir.FloorMod(tir.FloorDiv(r, s70), s72) * s70 + tir.FloorMod(r, s70),
                       s70 * s72)
    with ana.assume_nonempty([s72 * s70 * _c(8)]):
        simple = ana.simplify(row * _c(512) + tir.FloorMod(fused * _c(64) + lane, _c(512)))
    assert _text(simple) == "lane + fused * 64"


def test_a_division_by_a_size_that_may_be_zero_is_kept():
    n, m = _sizes("n", "m")
    ana = _analyzer([n, m], [])
    quotient = tir.FloorDiv(n * m - _c(1), n)  # m - 1 only when n >= 1
    assert isinstance(ana.simplify(quotient), tir.FloorDiv)
    with ana.assume_nonempty([n * m]):
        assert _text(ana.simplify(quotient)) == "m - 1"
    assert isinstance(ana.simplify(quotient), tir.FloorDiv)  # the assumption is scoped


def test_div_and_mod_by_a_symbol_merge_back():
    n = _sizes("n")[0]
    r = tir.Var("r", "int64")
    ana = _analyzer([n], [])
    assert ana.simplify(tir.FloorDiv(r, n) * n + tir.FloorMod(r, n)) is r
    assert _text(ana.simplify(tir.FloorDiv(r, n) * (n * _c(3)) + tir.FloorMod(r, n) * _c(3))) \
        == "r * 3"


def test_static_reshape_index_folds_to_the_flat_index():
    """The CNN's 64x16x7x7 -> 64x784 reshape: four divisions and modulos read one element."""
    i, j = tir.Var("i", "int64"), tir.Var("j", "int64")
    ana = _analyzer([], [(i, _c(64)), (j, _c(784))])
    flat = i * _c(784) + j
    index = (tir.FloorMod(flat // _c(7) // _c(7) // _c(16), _c(64)) * _c(784)
             + tir.FloorMod(flat // _c(7) // _c(7), _c(16)) * _c(49)
             + tir.FloorMod(flat // _c(7), _c(7)) * _c(7) + tir.FloorMod(flat, _c(7)))
    assert _text(ana.simplify(index)) == "i * 784 + j"


def test_a_multiple_of_a_divisor_of_the_constant_divides_through():
    a, b = tir.Var("a", "int64"), tir.Var("b", "int64")
    ana = _analyzer([], [(b, _c(64))])
    assert _text(ana.simplify(tir.FloorDiv(a * _c(64) + b, _c(512)))) == "a // 8"
    assert _text(ana.simplify(tir.FloorMod(a * _c(64) + b, _c(512)))) == "a % 8 * 64 + b"
    ana = _analyzer([], [(b, _c(65))])  # b may reach 64: no rewrite
    assert _text(ana.simplify(tir.FloorDiv(a * _c(64) + b, _c(512)))) == "(a * 64 + b) // 512"


def _random_index(rng, loops, sizes, depth):
    if depth == 0 or rng.random() < 0.3:
        return rng.choice(loops + sizes + [_c(rng.randint(-3, 9))])
    a = _random_index(rng, loops, sizes, depth - 1)
    kind = rng.choice(["add", "sub", "mul_s", "mul_c", "div_s", "mod_s", "div_c", "mod_c"])
    if kind in ("add", "sub"):
        b = _random_index(rng, loops, sizes, depth - 1)
        return tir.Add(a, b) if kind == "add" else tir.Sub(a, b)
    if kind == "mul_s":
        return tir.Mul(a, rng.choice(sizes))
    if kind == "mul_c":
        return tir.Mul(a, _c(rng.randint(-2, 8)))
    divisor = rng.choice(sizes + [sizes[0] * sizes[1]]) if kind.endswith("_s") \
        else _c(rng.choice([2, 3, 4, 8, 16]))
    return (tir.FloorDiv if kind.startswith("div") else tir.FloorMod)(a, divisor)


@pytest.mark.parametrize("seed", range(40))
def test_symbolic_rewrites_preserve_values(seed):
    """Random indices over loops whose extents are products of sizes, evaluated before and
    after at random sizes (from 1) and loop values inside their ranges."""
    rng = random.Random(7000 + seed)
    n, m = _sizes("n", "m")
    i, j, k = (tir.Var(v, "int64") for v in "ijk")
    extents = {id(i): lambda e: e[id(n)] * e[id(m)] * 4, id(j): lambda e: e[id(n)],
               id(k): lambda e: 8}
    ana = _analyzer([n, m], [(i, n * m * _c(4)), (j, n), (k, _c(8))])
    expr = _random_index(rng, [i, j, k], [n, m], 4)
    with ana.assume_nonempty([n * m * _c(4), n]):
        simple = ana.simplify(expr)
    for _ in range(30):
        env = {id(n): rng.randint(1, 6), id(m): rng.randint(1, 6)}
        for var in (i, j, k):
            env[id(var)] = rng.randrange(extents[id(var)](env))
        try:
            want = _value(expr, env)
        except ZeroDivisionError:
            continue
        assert _value(simple, env) == want, (expr, simple)
