"""LowerOpaqueBlock: blocks become statements over loop variables."""
import pytest

from rvm import tir
from rvm.ir.base import assert_structural_equal
from rvm.tir import IterVar, Range
from rvm.tir.transform.lower_opaque_block import lower_opaque_block


def _buffers():
    return (tir.decl_buffer((8,), "float32", name="A"), tir.decl_buffer((8,), "float32", name="B"),
            tir.decl_buffer((8,), "float32", name="T"))


def test_block_axes_are_substituted_and_allocations_made():
    A, B, T = _buffers()
    i = tir.Var("i")
    vi = IterVar(Range(0, 8), "vi", IterVar.DataPar)
    inner = tir.Block([vi], [], [], "B",
                      tir.stmt_seq(tir.BufferStore(T, A[vi.var] * 2.0, [vi.var]),
                                   tir.BufferStore(B, T[vi.var] + 1.0, [vi.var])))
    loop = tir.For(i, 0, 8, "serial", tir.BlockRealize([i], True, inner))
    root = tir.BlockRealize([], True, tir.Block([], [], [], "root", loop, alloc_buffers=[T]))
    after = lower_opaque_block(tir.PrimFunc([A, B], root))

    expected_loop = tir.For(i, 0, 8, "serial", tir.stmt_seq(
        tir.BufferStore(T, A[i] * 2.0, [i]), tir.BufferStore(B, T[i] + 1.0, [i])))
    expected = tir.Allocate(T.data, "float32", T.shape, True, tir.DeclBuffer(T, expected_loop),
                            annotations={"scope": "global"})
    assert_structural_equal(after.body, expected)


def test_predicate_becomes_a_branch():
    A, B, _ = _buffers()
    i = tir.Var("i")
    vi = IterVar(Range(0, 8), "vi", IterVar.DataPar)
    block = tir.Block([vi], [], [], "B", tir.BufferStore(B, A[vi.var], [vi.var]))
    func = tir.PrimFunc([A, B], tir.For(i, 0, 8, "serial", tir.BlockRealize([i], i < 5, block)))
    after = lower_opaque_block(func)
    expected = tir.For(i, 0, 8, "serial", tir.IfThenElse(i < 5, tir.BufferStore(B, A[i], [i])))
    assert_structural_equal(after.body, expected)


def test_unlowered_init_is_rejected():
    A, B, _ = _buffers()
    vi = IterVar(Range(0, 8), "vi", IterVar.DataPar)
    block = tir.Block([vi], [], [], "B", tir.BufferStore(B, A[vi.var], [vi.var]),
                      init=tir.BufferStore(B, tir.const(0, "float32"), [vi.var]))
    func = tir.PrimFunc([A, B], tir.BlockRealize([tir.const(0)], True, block))
    with pytest.raises(ValueError, match="LowerInitBlock"):
        lower_opaque_block(func)
