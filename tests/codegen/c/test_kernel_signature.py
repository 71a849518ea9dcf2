"""KernelSignature: parameters, expected types as text, and the shape-binding plan."""
import pytest

from rvm import te, tir
from rvm.codegen.c.kernel_signature import KernelSignature
from rvm.tir.expr_printer import dim_text


def test_plan_binds_first_occurrences_and_checks_the_rest():
    n, m = te.var("n", "int64"), te.var("m", "int64")
    A = te.placeholder((n, m), name="A")
    B = te.placeholder((m, 4), name="B")
    C = te.compute((n * 2,), lambda i: A[i // 2, 0] + B[0, 0], name="C")
    sig = KernelSignature("k", te.create_prim_func([A, B, C]))
    assert [p.expect for p in sig.params] == ["float32[n, m]", "float32[m, 4]",
                                                "float32[n * 2]"]
    assert [(s.action, s.param.name, s.axis) for s in sig.steps] == [
        ("bind", "A", 0), ("bind", "A", 1), ("var", "B", 0), ("const", "B", 1),
        ("expr", "C", 0)]
    assert [v.name_hint for v in sig.shape_vars] == ["n", "m"]
    assert sig.arity_message(2) == "k: expected 3 arguments (A, B, C), got 2"


def test_scalar_parameters_and_unbound_shapes():
    x = tir.Var("x", "float32")
    A = te.placeholder((4,), name="A")
    sig = KernelSignature("k", te.create_prim_func(
        [A, x, te.compute((4,), lambda i: A[i] * x, name="B")]))
    assert [(p.kind, p.expect) for p in sig.params] == [
        ("tensor", "float32[4]"), ("scalar", "float32"), ("tensor", "float32[4]")]
    n = tir.Var("n", "int64")
    D = tir.decl_buffer((n * 2,), "float32", name="D")
    func = tir.PrimFunc([D], tir.Evaluate(tir.const(0)))
    with pytest.raises(ValueError, match="the shape of parameter 'D' uses n"):
        KernelSignature("k", func)


def test_dim_text():
    n = tir.Var("n", "int64")
    assert (dim_text(tir.const(3)), dim_text(n), dim_text(n * 2)) == ("3", "n", "n * 2")
    assert dim_text((n + 1) * 2 - n // 4) == "(n + 1) * 2 - n // 4"


def test_body_variables_must_be_bound_by_a_parameter_shape_loop_or_let():
    n, m = tir.Var("n", "int64"), tir.Var("m", "int64")
    A = tir.decl_buffer((n,), "float32", name="A")
    i, t = tir.Var("i", "int64"), tir.Var("t", "int64")
    store = tir.BufferStore(A, tir.Cast("float32", t + m), [i])
    body = tir.For(i, tir.const(0, "int64"), n, tir.ForKind.SERIAL, tir.LetStmt(t, i * 2, store))
    with pytest.raises(ValueError, match="kernel 'k': the body uses m, which no parameter"):
        KernelSignature("k", tir.PrimFunc([A], body))
    bound = tir.PrimFunc([A, m], body)
    assert [p.kind for p in KernelSignature("k", bound).params] == ["tensor", "scalar"]
