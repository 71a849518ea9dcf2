"""LowerIntrin: floor division by sign knowledge, float floordiv/mod, sigmoid and rsqrt."""
from rvm import tir
from rvm.ir.base import assert_structural_equal
from rvm.tir.transform.lower_intrin import lower_intrin


def _store_loop(value_of_i, extent=8, lo=0):
    A = tir.decl_buffer((8,), "int32", name="A")
    i = tir.Var("i")
    return A, i, tir.PrimFunc([A], tir.For(i, lo, extent, "serial",
                                           tir.BufferStore(A, value_of_i(i), [i])))


def test_nonnegative_floordiv_becomes_truncating():
    A, i, func = _store_loop(
        lambda i: tir.FloorDiv(i, tir.const(4)) + tir.FloorMod(i, tir.const(3)))
    after = lower_intrin(func)
    expected = tir.BufferStore(A, tir.Div(i, tir.const(4)) + tir.Mod(i, tir.const(3)), [i])
    assert_structural_equal(after.body.body, expected)


def test_possibly_negative_floordiv_stays():
    A = tir.decl_buffer((8,), "int32", name="A")
    x = tir.Var("x")
    i = tir.Var("i")
    value = tir.FloorDiv(i - x, tir.const(4))
    func = tir.PrimFunc([A, x], tir.For(i, 0, 8, "serial", tir.BufferStore(A, value, [i])))
    assert isinstance(lower_intrin(func).body.body.value, tir.FloorDiv)


def test_symbolic_loop_extent_still_bounds_from_below():
    A = tir.decl_buffer((8,), "int32", name="A")
    n, i = tir.Var("n"), tir.Var("i")
    func = tir.PrimFunc([A, n], tir.For(i, 0, n, "serial",
                                        tir.BufferStore(A, tir.FloorDiv(i, tir.const(2)), [i])))
    assert isinstance(lower_intrin(func).body.body.value, tir.Div)


def test_float_intrinsics():
    B = tir.decl_buffer((4,), "float32", name="B")
    x = tir.Var("x", "float32")
    i = tir.Var("i")
    value = tir.sigmoid(x) + tir.rsqrt(x) + tir.FloorDiv(x, tir.const(2, "float32"))
    func = tir.PrimFunc([B, x], tir.For(i, 0, 4, "serial", tir.BufferStore(B, value, [i])))
    one = tir.const(1, "float32")
    expected = (tir.Div(one, one + tir.exp(-x)) + tir.Div(one, tir.sqrt(x))
                + tir.floor(tir.Div(x, tir.const(2, "float32"))))
    assert_structural_equal(lower_intrin(func).body.body.value, expected)
