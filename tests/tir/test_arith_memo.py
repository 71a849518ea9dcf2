"""The Analyzer remembers simplified expressions: a remembered result is only served where
simplifying anew gives the same (same structure, same variables, same known ranges)."""
import random

import pytest

from rvm import tir
from rvm.ir.base import structural_equal
from rvm.tir import arith
from rvm.tir.arith import Analyzer
from tests.tir.test_arith_random import _random_expr
from tests.tir.test_arith_symbolic import _analyzer, _c, _sizes


def _unremembered(ana, expr):
    """``expr`` simplified by an Analyzer in the state of ``ana`` but remembering nothing."""
    clone = Analyzer()
    clone._ranges = dict(ana._ranges)
    clone._symbolic_ranges = dict(ana._symbolic_ranges)
    return clone.simplify(expr)


def test_a_rebound_variable_is_not_served_the_old_result():
    i, j = tir.Var("i"), tir.Var("j")
    ana = Analyzer()
    ana.bind(j, tir.Range(0, 4))
    assert structural_equal(ana.simplify((i * 4 + j) // 4), i)
    ana.bind(j, tir.Range(0, 8))
    again = ana.simplify((i * 4 + j) // 4)
    assert structural_equal(again, _unremembered(ana, (i * 4 + j) // 4))
    assert not structural_equal(again, i)


def test_a_variable_bound_after_the_first_simplification_counts():
    i = tir.Var("i")
    ana = Analyzer()
    unbound = ana.simplify(i // 8)
    assert isinstance(unbound, tir.FloorDiv)
    ana.bind(i, tir.Range(0, 8))
    assert structural_equal(ana.simplify(i // 8), tir.const(0))


def test_assume_nonempty_is_part_of_the_state():
    a, b = tir.Var("a"), tir.Var("b")
    ana = Analyzer()
    size = [(v, tir.Range(0, tir.max_value("int32"))) for v in (a, b)]
    for var, rng in size:
        ana.bind(var, rng)
    expr = (a * b - 1) // b
    outside = ana.simplify(expr)
    with ana.assume_nonempty([a * b]):
        inside = ana.simplify(expr)
        assert structural_equal(inside, _unremembered(ana, expr))
    assert structural_equal(outside, _unremembered(ana, expr))
    assert structural_equal(ana.simplify(expr), outside)
    assert not structural_equal(inside, outside)


def test_the_range_of_a_symbolic_bound_is_followed():
    a, b = _sizes("a", "b")
    j, k = (tir.Var(n, "int64") for n in "jk")
    ana = _analyzer([a, b], [(j, a), (k, b)])
    index = tir.FloorMod(j * b + k, b)
    with ana.assume_nonempty([a, b]):
        assert ana.simplify(index) is k  # k < b
    # the same constant bounds, a wider symbolic range: k < b no longer holds
    bounds = ana._ranges[id(k)]
    ana.bind(k, tir.Range.from_min_extent(_c(0), tir.Max(a, b)))
    assert ana._ranges[id(k)][1:] == bounds[1:]
    with ana.assume_nonempty([a, b]):
        again = ana.simplify(index)
        assert structural_equal(again, _unremembered(ana, index))
    assert isinstance(again, tir.FloorMod)


def test_variables_of_one_name_are_told_apart():
    i1, i2 = tir.Var("i"), tir.Var("i")
    ana = Analyzer()
    ana.bind(i1, tir.Range(0, 4))
    assert structural_equal(ana.simplify(i1 // 4), tir.const(0))
    assert isinstance(ana.simplify(i2 // 4), tir.FloorDiv)


def test_an_unchanged_expression_is_returned_itself():
    i, j = tir.Var("i"), tir.Var("j")
    ana = Analyzer()
    first, second = tir.Add(i, j), tir.Add(i, j)
    calls = []

    def unchanged(expr):
        calls.append(expr)
        return expr

    assert ana._remembered(first, unchanged) is first
    assert ana._remembered(second, unchanged) is second  # remembered: the caller's object
    assert calls == [first]


def test_the_memory_is_bounded(monkeypatch):
    monkeypatch.setattr(arith, "MEMO_SIZE", 4)
    i = tir.Var("i")
    ana = Analyzer()
    for k in range(1, 20):
        ana.simplify(i * k + k)
    assert len(ana._simplified) <= 4


@pytest.mark.parametrize("seed", range(12))
def test_a_remembering_analyzer_agrees_with_one_remembering_nothing(seed):
    rng = random.Random(seed)
    vars_ = [tir.Var(n) for n in "ijk"]
    # two pools of equal expressions, built apart: equal structure, distinct objects
    pools = [[_random_expr(random.Random(seed * 100 + k), vars_, 4) for k in range(6)]
             for _ in range(2)]
    ana = Analyzer()
    for _ in range(60):
        if rng.random() < 0.3:
            var = rng.choice(vars_)
            rng_ = tir.Range(rng.randint(-2, 3), rng.choice([1, 2, 4, 8, 16]))
            ana.bind(var, rng_)
        expr = rng.choice(rng.choice(pools))
        got = ana.simplify(expr)
        assert structural_equal(got, _unremembered(ana, expr)), (expr, got)
