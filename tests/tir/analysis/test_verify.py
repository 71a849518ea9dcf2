import pytest

from rvm import tir
from rvm.ir.module import IRModule
from rvm.tir.analysis import verify_well_formed
from tests.tir.builders import matmul_func, relu_func


def test_valid_functions_pass():
    assert verify_well_formed(matmul_func())
    assert verify_well_formed(IRModule({"relu0": relu_func(), "mm": matmul_func()}))


def test_undefined_variable_is_reported():
    A = tir.decl_buffer((4,), name="A")
    x = tir.Var("x")
    f = tir.PrimFunc([A], tir.BufferStore(A, 1.0, [x]))
    with pytest.raises(ValueError, match="'x' is used where it is not defined"):
        verify_well_formed(f)
    assert verify_well_formed(f, assert_mode=False) is False


def test_undeclared_buffer_is_reported():
    A = tir.decl_buffer((4,), name="A")
    B = tir.decl_buffer((4,), name="B")
    i = tir.Var("i")
    f = tir.PrimFunc([A], tir.For(i, 0, 4, "serial", tir.BufferStore(A, B[i], [i])))
    with pytest.raises(ValueError, match="buffer 'B' is read but not declared"):
        verify_well_formed(f)


def test_variable_defined_twice_is_reported():
    A = tir.decl_buffer((4,), name="A")
    i = tir.Var("i")
    inner = tir.For(i, 0, 4, "serial", tir.BufferStore(A, 1.0, [i]))
    f = tir.PrimFunc([A], tir.SeqStmt([inner, inner]))
    with pytest.raises(ValueError, match="defined more than once"):
        verify_well_formed(f)


def test_loop_var_used_inside_block_is_reported():
    A = tir.decl_buffer((4,), name="A")
    i = tir.Var("i")
    v = tir.IterVar(tir.Range(0, 4), tir.Var("v"), tir.IterVar.DataPar)
    blk = tir.Block([v], [], [A[v.var]], "b", tir.BufferStore(A, 1.0, [i]))
    f = tir.PrimFunc([A], tir.For(i, 0, 4, "serial", tir.BlockRealize([i], True, blk)))
    with pytest.raises(ValueError, match="'i' is used where it is not defined"):
        verify_well_formed(f)


def test_binding_with_own_axis_is_reported():
    A = tir.decl_buffer((4,), name="A")
    v = tir.IterVar(tir.Range(0, 4), tir.Var("v"), tir.IterVar.DataPar)
    blk = tir.Block([v], [], [A[v.var]], "b", tir.BufferStore(A, 1.0, [v.var]))
    f = tir.PrimFunc([A], tir.BlockRealize([v.var], True, blk))
    with pytest.raises(ValueError, match="own axis"):
        verify_well_formed(f)
