"""Simplify: index arithmetic folds with loop ranges; constant branches disappear."""
from rvm import tir
from rvm.ir.base import assert_structural_equal
from rvm.tir.transform.simplify import simplify_prim_func


def test_indices_fold_with_loop_ranges():
    A = tir.decl_buffer((16,), "float32", name="A")
    B = tir.decl_buffer((4,), "float32", name="B")
    i, j = tir.Var("i"), tir.Var("j")
    store = tir.BufferStore(A, B[(i * 4 + j) // 4], [i * 4 + j + 0])
    func = tir.PrimFunc([A, B], tir.For(i, 0, 4, "serial", tir.For(j, 0, 4, "serial", store)))
    after = simplify_prim_func(func)
    expected = tir.For(i, 0, 4, "serial", tir.For(j, 0, 4, "serial",
                                                   tir.BufferStore(A, B[i], [i * 4 + j])))
    assert_structural_equal(after.body, expected)


def test_provable_branches_are_resolved():
    A = tir.decl_buffer((4,), "float32", name="A")
    i = tir.Var("i")
    then = tir.BufferStore(A, tir.const(1, "float32"), [i])
    other = tir.BufferStore(A, tir.const(2, "float32"), [i])
    func = tir.PrimFunc([A], tir.For(i, 0, 4, "serial", tir.IfThenElse(i < 4, then, other)))
    after = simplify_prim_func(func)
    assert_structural_equal(after.body, tir.For(i, 0, 4, "serial", then))


def test_already_simple_function_is_unchanged():
    A = tir.decl_buffer((4,), "float32", name="A")
    i = tir.Var("i")
    func = tir.PrimFunc([A], tir.For(i, 0, 4, "serial", tir.BufferStore(A, A[i] * 2.0, [i])))
    assert_structural_equal(simplify_prim_func(func).body, func.body)


def test_loads_of_different_buffers_are_not_merged():
    A = tir.decl_buffer((4,), "int32", name="A")
    B = tir.decl_buffer((4,), "int32", name="B")
    C = tir.decl_buffer((4,), "int32", name="C")
    i = tir.Var("i")
    store = tir.BufferStore(C, A[i] + B[i + 0], [i])
    func = tir.PrimFunc([A, B, C], tir.For(i, 0, 4, "serial", store))
    value = simplify_prim_func(func).body.body.value
    assert isinstance(value, tir.Add)
    assert value.a.buffer is A and value.b.buffer is B
    assert_structural_equal(value.b.indices[0], i)


def test_unit_loops_are_removed():
    A = tir.decl_buffer((1, 4), "float32", name="A")
    i, j = tir.Var("i"), tir.Var("j")
    store = tir.BufferStore(A, tir.const(1, "float32"), [i, j])
    func = tir.PrimFunc([A], tir.For(i, 0, 1, "serial", tir.For(j, 0, 4, "serial", store)))
    after = simplify_prim_func(func)
    expected = tir.For(j, 0, 4, "serial", tir.BufferStore(A, tir.const(1, "float32"),
                                                           [tir.const(0), j]))
    assert_structural_equal(after.body, expected)
