import pytest

from rvm import tir
from rvm.ir.base import structural_equal


def test_operators_build_nodes_with_matched_dtypes():
    n = tir.Var("n", "int64")
    e = n * 2 + 1
    assert isinstance(e, tir.Add) and isinstance(e.a, tir.Mul)
    assert e.dtype == "int64" and e.b.dtype == "int64"
    assert isinstance(n // 4, tir.FloorDiv) and isinstance(n % 4, tir.FloorMod)
    assert isinstance(n / 4, tir.Div)
    assert isinstance(2 - n, tir.Sub) and e.a.b.value == 2


def test_comparisons_and_logic_are_bool():
    i = tir.Var("i")
    c = (i < 3) & (i >= 1) | ~(i == 2)
    assert isinstance(c, tir.Or) and c.dtype == "bool"
    assert isinstance(c.b, tir.Not) and isinstance(c.b.a, tir.EQ)


def test_eq_as_python_bool_is_identity():
    i, j = tir.Var("i"), tir.Var("j")
    assert bool(i == i) and not bool(i == j) and bool(i != j)
    assert i in [j, i] and {i: 1}[i] == 1


def test_symbolic_condition_as_bool_is_rejected():
    with pytest.raises(ValueError, match="Python bool"):
        bool(tir.Var("i") < 3)


def test_promotion_int_to_float_and_widening():
    i, x = tir.Var("i", "int32"), tir.Var("x", "float32")
    e = i + x
    assert e.dtype == "float32" and isinstance(e.a, tir.Cast)
    assert (tir.Var("a", "int32") + tir.Var("b", "int64")).dtype == "int64"
    assert (x + 1).b.dtype == "float32"


def test_constant_folding():
    i = tir.Var("i")
    assert (tir.const(3) + 4).value == 7
    assert i + 0 is i and 0 + i is i and i * 1 is i and (i - 0) is i
    assert (i * 0).value == 0
    assert (tir.const(-7) // 2).value == -4 and (tir.const(-7) % 2).value == 1
    assert tir.truncdiv(tir.const(-7), 2).value == -3 and tir.truncmod(tir.const(-7), 2).value == -1
    assert i // 1 is i and (i % 1).value == 0
    assert tir.min(tir.const(3), 5).value == 3 and tir.max(tir.const(3), 5).value == 5
    assert (tir.const(2) < 3).value == 1 and (tir.const(2) < 3).dtype == "bool"
    with pytest.raises(ZeroDivisionError):
        i // 0


def test_const_dtypes():
    assert tir.const(1).dtype == "int32" and tir.const(2 ** 40).dtype == "int64"
    assert tir.const(1.0).dtype == "float32" and tir.const(True).dtype == "bool"
    assert tir.const(2, "float64").value == 2.0
    with pytest.raises(TypeError):
        tir.const("x")


def test_intrinsics():
    x = tir.Var("x", "float32")
    for fn, name in [(tir.exp, "tir.exp"), (tir.log, "tir.log"), (tir.sqrt, "tir.sqrt"),
                     (tir.tanh, "tir.tanh"), (tir.sigmoid, "tir.sigmoid"),
                     (tir.fabs, "tir.fabs"), (tir.erf, "tir.erf")]:
        call = fn(x)
        assert isinstance(call, tir.Call) and call.op == name and call.dtype == "float32"
    assert tir.pow(x, 2).op == "tir.pow" and tir.pow(x, 2).args[1].dtype == "float32"
    ite = tir.if_then_else(tir.Var("i") < 2, x, 0.0)
    assert ite.op == "tir.if_then_else" and ite.args[2].value == 0.0
    assert isinstance(tir.abs(tir.Var("i")), tir.Select)


def test_call_packed_and_extern():
    x = tir.Var("x", "float32")
    c = tir.call_packed("env.f", x, 1)
    assert c.op == "tir.call_packed" and c.args[0].value == "env.f" and c.dtype == "int32"
    e = tir.call_extern("float32", "expf", x)
    assert e.op == "tir.call_extern" and e.dtype == "float32"


def test_repr_is_script_like():
    i, j = tir.Var("i"), tir.Var("j")
    assert repr(i * 4 + j) == "i * 4 + j"
    assert repr((i + j) * 4) == "(i + j) * 4"
    assert repr(i - (j - 1)) == "i - (j - 1)"
    assert repr(tir.Var("n", "int64") + 1) == "n + T.int64(1)"


def test_range_dtype_follows_symbolic_end():
    n = tir.Var("n", "int64")
    r = tir.Range(0, n)
    assert r.min.dtype == "int64" and r.extent is n
    assert tir.Range(2, 10).extent.value == 8


def test_structural_equal_on_expressions():
    assert structural_equal(tir.Var("a") * 2 + 1, tir.Var("b") * 2 + 1, map_free_vars=True)
    assert not structural_equal(tir.Var("a") * 2, tir.Var("b", "int64") * 2)


@pytest.mark.parametrize("dtype, lowest", [
    ("float32", -3.4028234663852886e+38), ("float16", -65504.0),
    ("bfloat16", -3.3895313892515355e+38), ("float8_e4m3fn", -448.0),
    ("float8_e5m2", -57344.0), ("int8", -128), ("bool", 0)])
def test_min_and_max_value_know_the_narrow_floats(dtype, lowest):
    pytest.importorskip("ml_dtypes")
    from rvm.tir import op

    assert op.min_value(dtype).value == lowest
    assert op.max_value(dtype).value == (1 if dtype == "bool" else 127 if dtype == "int8"
                                         else -lowest)
