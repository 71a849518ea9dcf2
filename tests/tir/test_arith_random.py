"""The simplifier preserves values: random integer expressions, evaluated before and after."""
import random

import pytest

from rvm import tir
from rvm.tir.arith import Analyzer
from tests.tir.evaluator import _Machine

BOUNDS = {"i": 8, "j": 4, "k": 16}


def _random_expr(rng, vars_, depth):
    if depth == 0 or rng.random() < 0.25:
        if rng.random() < 0.6:
            return rng.choice(vars_)
        return tir.const(rng.randint(-5, 9))
    a = _random_expr(rng, vars_, depth - 1)
    b = _random_expr(rng, vars_, depth - 1)
    kind = rng.choice(["add", "sub", "mul_c", "div_c", "mod_c", "min", "max", "mul"])
    if kind == "add":
        return tir.Add(a, b)
    if kind == "sub":
        return tir.Sub(a, b)
    if kind == "mul":
        return tir.Mul(a, b)
    if kind == "mul_c":
        return tir.Mul(a, tir.const(rng.randint(-3, 4)))
    if kind == "div_c":
        return tir.FloorDiv(a, tir.const(rng.choice([1, 2, 3, 4, 8])))
    if kind == "mod_c":
        return tir.FloorMod(a, tir.const(rng.choice([1, 2, 3, 4, 8])))
    return (tir.Min if kind == "min" else tir.Max)(a, b)


def _value(expr, env):
    machine = _Machine({})
    machine.env = env
    return machine.expr(expr)


@pytest.mark.parametrize("seed", range(40))
def test_simplify_preserves_values(seed):
    rng = random.Random(seed)
    vars_ = [tir.Var(n) for n in BOUNDS]
    ana = Analyzer()
    for v in vars_:
        ana.bind(v, tir.Range(0, BOUNDS[v.name_hint]))
    expr = _random_expr(rng, vars_, 4)
    simple = ana.simplify(expr)
    for _ in range(25):
        env = {id(v): rng.randrange(BOUNDS[v.name_hint]) for v in vars_}
        assert _value(simple, env) == _value(expr, env), (expr, simple)


@pytest.mark.parametrize("seed", range(20))
def test_comparisons_decided_only_when_true_everywhere(seed):
    rng = random.Random(1000 + seed)
    vars_ = [tir.Var(n) for n in BOUNDS]
    ana = Analyzer()
    for v in vars_:
        ana.bind(v, tir.Range(0, BOUNDS[v.name_hint]))
    a, b = _random_expr(rng, vars_, 3), _random_expr(rng, vars_, 3)
    cond = tir.LT(a, b)
    simple = ana.simplify(cond)
    for _ in range(25):
        env = {id(v): rng.randrange(BOUNDS[v.name_hint]) for v in vars_}
        assert bool(_value(simple, env)) == bool(_value(cond, env)), (cond, simple)
