from rvm import tir
from rvm.tir.analysis import free_vars, undefined_vars
from tests.tir.builders import relu_func


def test_free_vars_in_order_without_bound_ones():
    i, n, m = tir.Var("i"), tir.Var("n"), tir.Var("m")
    loop = tir.For(i, 0, n, "serial", tir.Evaluate(i * m + n))
    assert [v.name_hint for v in free_vars(loop)] == ["n", "m"]


def test_let_binds():
    x, y = tir.Var("x"), tir.Var("y")
    assert free_vars(tir.LetStmt(x, y + 1, tir.Evaluate(x))) == [y]
    assert free_vars(tir.Let(x, 1, x + y)) == [y]


def test_buffer_shapes_count_unless_excluded():
    n = tir.Var("n")
    A = tir.decl_buffer((n,), name="A")
    e = A[0]
    assert [v.name_hint for v in free_vars(e)] == ["A", "n"]
    assert [v.name_hint for v in free_vars(e, include_buffer_shapes=False)] == ["A"]


def test_prim_func_defines_params_and_shape_vars():
    assert undefined_vars(relu_func()) == []
    x = tir.Var("x")
    A = tir.decl_buffer((4,), name="A")
    f = tir.PrimFunc([A], tir.BufferStore(A, tir.Cast("float32", x), [0]))
    assert undefined_vars(f) == [x]
