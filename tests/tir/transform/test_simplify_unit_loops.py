"""Simplify's unit-loop removal, done in one walk, equals substituting each unit loop's start
into its body, innermost loop first (as it was done before)."""
from rvm import tir
from rvm.ir.base import assert_structural_equal
from rvm.tir.expr import IntImm
from rvm.tir.stmt_functor import StmtMutator, substitute
from rvm.tir.transform.simplify import _UnitLoopRemover


class _OneByOne(StmtMutator):
    """The reference: every unit loop's body with its start substituted, inner loops first."""

    def visit_for_(self, op):
        op = self._generic(op)
        if isinstance(op.extent, IntImm) and op.extent.value == 1:
            return substitute(op.body, {op.loop_var: op.min})
        return op


def _same_as_reference(stmt):
    got = _UnitLoopRemover().visit(stmt)
    assert_structural_equal(got, _OneByOne().visit(stmt), map_free_vars=False)
    return got


def test_a_start_that_reads_an_enclosing_unit_loop():
    A = tir.decl_buffer((64,), "int32", name="A")
    n, i, j, k = tir.Var("n"), tir.Var("i"), tir.Var("j"), tir.Var("k")
    store = tir.BufferStore(A, i + j + k, [i * 16 + j * 4 + k])
    stmt = tir.For(i, n, 1, "serial",
                   tir.For(j, i * 2 + 1, 1, "serial",
                           tir.For(k, 0, 4, "serial", store)))
    got = _same_as_reference(stmt)
    assert isinstance(got, tir.For) and got.loop_var is k
    # j's start is i * 2 + 1 with i replaced by n
    assert_structural_equal(got.body.value, n + (n * 2 + 1) + k, map_free_vars=False)


def test_a_loop_variable_reused_by_a_nested_unit_loop():
    A = tir.decl_buffer((64,), "int32", name="A")
    i = tir.Var("i")
    inner = tir.For(i, i + 3, 1, "serial", tir.BufferStore(A, i, [i]))
    stmt = tir.For(i, 5, 1, "serial", tir.SeqStmt([tir.BufferStore(A, i, [i]), inner,
                                                   tir.BufferStore(A, i * 2, [i])]))
    got = _same_as_reference(stmt)
    five = tir.const(5)
    expected = [five, tir.Add(five, tir.const(3)), tir.Mul(five, tir.const(2))]
    for store, value in zip(got.seq, expected):
        assert_structural_equal(store.value, value)


def test_unit_loops_beside_others_and_none():
    A = tir.decl_buffer((64,), "int32", name="A")
    i, j, k = tir.Var("i"), tir.Var("j"), tir.Var("k")
    stmt = tir.For(i, 0, 4, "serial", tir.SeqStmt([
        tir.For(j, 2, 1, "serial", tir.BufferStore(A, i + j, [i * 4 + j])),
        tir.For(k, 0, 3, "serial", tir.BufferStore(A, k, [k]))]))
    _same_as_reference(stmt)
    plain = tir.For(k, 0, 3, "serial", tir.BufferStore(A, k, [k]))
    assert _UnitLoopRemover().visit(plain) is plain
