"""LowerInitBlock: T.init becomes initialisation guarded by the start of the reduction."""
from rvm import tir
from rvm.ir.base import assert_structural_equal
from rvm.tir import IterVar, Range
from rvm.tir.transform.lower_init_block import LowerInitBlock, lower_init_block
from rvm.ir.module import IRModule


def _row_sum(with_init, guarded):
    A = tir.decl_buffer((4, 8), "float32", name="A")
    B = tir.decl_buffer((4,), "float32", name="B")
    i, k = tir.Var("i"), tir.Var("k")
    vi = IterVar(Range(0, 4), "vi", IterVar.DataPar)
    vk = IterVar(Range(0, 8), "vk", IterVar.CommReduce)
    init = tir.BufferStore(B, tir.const(0, "float32"), [vi.var])
    update = tir.BufferStore(B, B[vi.var] + A[vi.var, vk.var], [vi.var])
    if guarded:
        body = tir.stmt_seq(tir.IfThenElse(tir.all(vk.var == 0), init), update)
        block = tir.Block([vi, vk], [], [], "B", body)
    else:
        block = tir.Block([vi, vk], [], [], "B", update, init=init if with_init else None)
    loops = tir.For(i, 0, 4, "serial", tir.For(k, 0, 8, "serial",
                                               tir.BlockRealize([i, k], True, block)))
    return tir.PrimFunc([A, B], loops)


def test_init_becomes_guarded_statement():
    after = lower_init_block(_row_sum(True, False))
    assert_structural_equal(after.body, _row_sum(True, True).body, map_free_vars=True)


def test_function_without_init_is_unchanged():
    func = _row_sum(False, False)
    assert lower_init_block(func) is func


def test_pass_form_runs_on_modules():
    mod = LowerInitBlock()(IRModule({"main": _row_sum(True, False)}))
    assert_structural_equal(mod["main"].body, _row_sum(True, True).body, map_free_vars=True)


def test_init_without_reduction_axes_runs_unconditionally():
    B = tir.decl_buffer((4,), "float32", name="B")
    vi = IterVar(Range(0, 4), "vi", IterVar.DataPar)
    init = tir.BufferStore(B, tir.const(0, "float32"), [vi.var])
    update = tir.BufferStore(B, B[vi.var] + tir.const(1, "float32"), [vi.var])
    i = tir.Var("i")
    block = tir.Block([vi], [], [], "B", update, init=init)
    func = tir.PrimFunc([B], tir.For(i, 0, 4, "serial", tir.BlockRealize([i], True, block)))
    body = lower_init_block(func).body.body.block.body
    assert isinstance(body, tir.SeqStmt)
    assert_structural_equal(body.seq[0], init)
