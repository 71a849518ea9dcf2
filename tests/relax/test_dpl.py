"""relax.dpl: matching patterns against Relax expressions, and rewrite_call."""
import pytest

from rvm import relax
from rvm.ir.base import assert_structural_equal
from rvm.relax.analysis import get_var2val
from rvm.relax.dpl import (
    is_const, is_op, is_tuple, is_tuple_get_item, match, rewrite_call, wildcard,
)
from rvm.relax.op.registry import Op
from rvm.script import ir as I
from rvm.script import relax as R


@I.ir_module
class Graph:
    @R.function
    def main(a: R.Tensor((4,), "float32"), b: R.Tensor((4,), "float32")):
        with R.dataflow():
            x = R.add(a, b)
            y = R.multiply(x, R.const(2.0, "float32"))
            t = R.split(y, 2)
            h = t[1]
            R.output(h)
        return h


def _bindings():
    func = Graph["main"]
    return func, {b.var.name_hint: b for b in func.body.blocks[0].bindings}


def test_call_patterns_see_through_bound_variables():
    func, b = _bindings()
    var2val = get_var2val(func)
    add = is_op("relax.add")(wildcard(), wildcard())
    mul = is_op("relax.multiply")(add, is_const())
    found = match(mul, b["y"].value, var2val)
    assert found is not None and found[add] is b["x"].value
    assert match(mul, b["y"].value) is None  # without the bindings x is just a variable
    assert not is_op("relax.multiply")(add, wildcard()).match(b["x"].value, var2val)
    assert not is_op("relax.multiply")(wildcard()).match(b["y"].value)  # arity
    assert is_op("relax.multiply")(wildcard(), varg_default_wildcard=True).match(b["y"].value)


def test_alternatives_conjunctions_types_tuples():
    func, b = _bindings()
    var2val = get_var2val(func)
    either = is_op("relax.subtract") | is_op("relax.add")
    assert either(wildcard(), wildcard()).match(b["x"].value)
    assert (is_op("relax.add")(wildcard(), wildcard()) & wildcard().has_dtype("float32")).match(
        b["x"].value)
    assert not wildcard().has_dtype("int32").match(b["x"].value)
    assert wildcard().has_shape((4,)).match(b["a"].value if "a" in b else func.params[0])
    assert not wildcard().has_shape((5,)).match(func.params[0])
    item = is_tuple_get_item(is_op("relax.split")(wildcard()), 1)
    assert item.match(b["h"].value, var2val)
    assert not is_tuple_get_item(wildcard(), 0).match(b["h"].value)
    pair = relax.Tuple([func.params[0], func.params[1]])
    assert is_tuple([wildcard(), wildcard()]).match(pair)
    assert not is_tuple([wildcard()]).match(pair)


def test_a_pattern_used_twice_must_match_the_same_value():
    func, b = _bindings()
    same = wildcard()
    assert not is_op("relax.add")(same, same).match(b["x"].value)
    twice = relax.op.add(func.params[0], func.params[0])
    assert is_op("relax.add")(same, same).match(twice)


def test_bad_patterns_are_named():
    with pytest.raises(TypeError, match="is_op expects an operator name"):
        is_op(3)
    with pytest.raises(ValueError, match="operator 'relax.nope' is not registered"):
        is_op("relax.nope")
    with pytest.raises(TypeError, match="expected a DFPattern"):
        is_op("relax.add")(3)


@I.ir_module
class Rewritten:
    @R.function
    def main(a: R.Tensor((4,), "float32"), b: R.Tensor((4,), "float32")):
        with R.dataflow():
            x = R.subtract(a, b)
            y = R.multiply(x, R.const(2.0, "float32"))
            t = R.split(y, 2)
            h = t[1]
            R.output(h)
        return h


def test_rewrite_call_replaces_each_match():
    lhs, rhs = wildcard(), wildcard()
    pattern = is_op("relax.add")(lhs, rhs)

    def to_subtract(expr, matches):
        assert isinstance(expr.op, Op)
        return relax.op.subtract(matches[lhs], matches[rhs])

    out = rewrite_call(pattern, to_subtract, Graph["main"])
    assert_structural_equal(out, Rewritten["main"])
    assert rewrite_call(pattern, lambda e, m: e, Graph["main"]) is Graph["main"]
    with pytest.raises(ValueError, match="returned None"):
        rewrite_call(pattern, lambda e, m: None, Graph["main"])
    with pytest.raises(ValueError, match="still rewriting"):
        rewrite_call(pattern, lambda e, m: relax.op.add(m[rhs], m[lhs]), Graph["main"])
