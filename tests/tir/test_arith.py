from rvm import tir
from rvm.tir.arith import Analyzer, simplify


def test_linear_canonicalization():
    i, j = tir.Var("i"), tir.Var("j")
    assert repr(simplify((i + 1) * 2 - 2)) == "i * 2"
    assert repr(simplify(i * 1 + 0 + 3 - 1)) == "i + 2"
    assert simplify(i - i).value == 0
    assert simplify(i * 4 + j - (j + i * 4)).value == 0
    assert repr(simplify(j + (i + 1 - i))) == "j + 1"
    assert repr(simplify((i + 2) + (j + 3))) == "i + j + 5"


def test_constant_division_and_modulo():
    i = tir.Var("i")
    assert simplify(tir.FloorDiv(tir.const(7), tir.const(2))).value == 3
    assert simplify(tir.FloorMod(tir.const(-7), tir.const(2))).value == 1
    assert simplify(tir.FloorDiv(i, tir.const(1))) is i
    assert simplify(tir.FloorMod(i, tir.const(1))).value == 0
    assert repr(simplify(tir.FloorDiv(i * 6 + 4, tir.const(2)))) == "i * 3 + 2"
    assert simplify(tir.FloorMod(i * 6 + 4, tir.const(2))).value == 0


def test_division_with_bounds():
    i, j = tir.Var("i"), tir.Var("j")
    ana = Analyzer()
    ana.bind(j, tir.Range(0, 4))
    assert ana.simplify((i * 4 + j) // 4) is i
    assert ana.simplify((i * 4 + j) % 4) is j
    unbounded = tir.Var("u")
    # the multiple of 4 divides exactly whatever the rest: the rest keeps its division
    assert repr(ana.simplify((i * 4 + unbounded) // 4)) == "i + u // 4"
    assert repr(ana.simplify((i * 4 + unbounded) % 4)) == "u % 4"


def test_min_max_and_comparisons():
    i, j = tir.Var("i"), tir.Var("j")
    assert simplify(tir.Min(tir.const(3), tir.const(5))).value == 3
    assert simplify(tir.Max(i, i)) is i
    assert simplify(tir.Max(i + 1, i)).a is i
    ana = Analyzer()
    ana.bind(j, tir.Range(0, 4))
    assert ana.simplify(tir.Min(j, tir.const(10))) is j
    assert ana.can_prove(j < 4) and not ana.can_prove(j < 3)
    assert simplify(tir.LT(i, i + 1)).value == 1
    assert ana.can_prove_equal(i * 2 + j, j + 2 * i)


def test_floats_are_folded_not_reassociated():
    x = tir.Var("x", "float32")
    e = tir.Add(tir.Add(x, tir.const(1.0)), tir.const(2.0))
    out = simplify(e)
    assert isinstance(out, tir.Add) and isinstance(out.a, tir.Add)
    assert simplify(tir.Mul(x, tir.const(1.0))) is x


def test_select_and_if_then_else_with_constant_condition():
    x, y = tir.Var("x", "float32"), tir.Var("y", "float32")
    assert simplify(tir.Select(tir.LT(tir.const(1), tir.const(2)), x, y)) is x
    i = tir.Var("i")
    ana = Analyzer()
    ana.bind(i, tir.Range(0, 4))
    assert ana.simplify(tir.Call("float32", "tir.if_then_else", [i < 8, x, y])) is x


def test_simplify_statements_uses_loop_ranges():
    A = tir.decl_buffer((16,), name="A")
    i, j = tir.Var("i"), tir.Var("j")
    store = tir.BufferStore(A, 0.0, [tir.FloorMod(i * 4 + j, tir.const(4))])
    loop = tir.For(i, 0, 4, "serial", tir.For(j, 0, 4, "serial", store))
    out = simplify(loop)
    assert out.body.body.indices[0] is j


def test_const_int_bound():
    i, j = tir.Var("i"), tir.Var("j")
    ana = Analyzer()
    ana.bind(i, tir.Range(0, 8))
    ana.bind(j, tir.Range(0, 4))
    assert ana.const_int_bound(i * 4 + j) == (0, 31)
    assert ana.const_int_bound(j - i) == (-7, 3)
    assert ana.const_int_bound(tir.Var("free")) == (None, None)
    assert ana.const_int_bound(tir.SizeVar("n"))[0] == 0


def test_fused_index_recombines():
    f = tir.Var("fused")
    assert simplify(f // 4 * 4 + f % 4) is f
    i, j = tir.Var("i"), tir.Var("j")
    e = (i * 4 + j) // 8 * 16 + (i * 4 + j) % 8 * 2
    assert repr(simplify(e)) == "i * 8 + j * 2"


def test_nested_div_and_mod():
    x = tir.Var("x")
    assert repr(simplify(x // 4 // 2)) == "x // 8"
    assert repr(simplify(x % 8 % 4)) == "x % 4"
    assert repr(simplify(x % 4 % 8)) == "x % 4"


def test_small_integer_powers_become_products():
    x = tir.Var("x", "float32")
    a = tir.decl_buffer((4,), "float32", name="a")
    cube = simplify(tir.Call("float32", "tir.pow", [a[1] + x, tir.const(3.0, "float32")]))
    assert repr(cube).count("*") == 2 and "pow" not in repr(cube)
    assert simplify(tir.Call("float32", "tir.pow", [x, tir.const(1.0, "float32")])) is x
    # a fractional exponent, a call in the base (evaluated once by pow, n times by a
    # product) and pow(x, 0) (1 even for NaN) stay calls
    for base, exponent in ((x, 2.5), (tir.Call("float32", "tir.exp", [x]), 2.0), (x, 0.0)):
        out = simplify(tir.Call("float32", "tir.pow", [base, tir.const(exponent, "float32")]))
        assert isinstance(out, tir.Call) and out.op == "tir.pow"
