"""LocalizeReduction: reductions over innermost loops accumulate in a local scalar."""
from rvm import te, tir
from rvm.ir.base import assert_structural_equal
from rvm.tir import IterVar, Range
from rvm.tir.transform.localize_reduction import SIMD_REDUCTION, localize_reduction


def _matmul_block(A, B, C, i, j, k, combine=None, transposed_b=True):
    """C[i, j] = sum_k A[i, k] * B[j, k] (B[k, j] when not ``transposed_b``)."""
    vi = IterVar(Range(0, 4), "vi", IterVar.DataPar)
    vj = IterVar(Range(0, 4), "vj", IterVar.DataPar)
    vk = IterVar(Range(0, 8), "vk", IterVar.CommReduce)
    cur = C[vi.var, vj.var]
    b = B[vj.var, vk.var] if transposed_b else B[vk.var, vj.var]
    term = A[vi.var, vk.var] * b
    value = combine(cur, term) if combine else cur + term
    block = tir.Block([vi, vj, vk], [], [], "C", tir.BufferStore(C, value, [vi.var, vj.var]),
                      init=tir.BufferStore(C, tir.const(0, "float32"), [vi.var, vj.var]))
    return tir.BlockRealize([i, j, k], True, block)


def _buffers():
    return (tir.decl_buffer((4, 8), "float32", name="A"),
            tir.decl_buffer((4, 8), "float32", name="B"),
            tir.decl_buffer((4, 4), "float32", name="C"))


def test_matmul_accumulates_locally():
    A, B, C = _buffers()
    i, j, k = tir.Var("i"), tir.Var("j"), tir.Var("k")
    nest = tir.For(i, 0, 4, "serial", tir.For(j, 0, 4, "serial", tir.For(
        k, 0, 8, "serial", _matmul_block(A, B, C, i, j, k))))
    after = localize_reduction(tir.PrimFunc([A, B, C], nest))
    alloc = after.body.body.body
    assert isinstance(alloc, tir.Allocate) and alloc.annotations["scope"] == "local"
    acc = alloc.body.buffer
    start, loop, finish = alloc.body.body.seq
    assert_structural_equal(start, tir.BufferStore(acc, tir.const(0, "float32"), [0]))
    assert_structural_equal(finish, tir.BufferStore(C, acc[0], [i, j]))
    op, var = loop.annotations[SIMD_REDUCTION]
    assert op == "+" and var is acc.data
    update = loop.body.block.body
    assert update.buffer is acc and loop.body.block.init is None


def test_max_reduction_is_recognised():
    A, B, C = _buffers()
    i, j, k = tir.Var("i"), tir.Var("j"), tir.Var("k")
    nest = tir.For(i, 0, 4, "serial", tir.For(j, 0, 4, "serial", tir.For(
        k, 0, 8, "serial", _matmul_block(A, B, C, i, j, k, combine=tir.max))))
    loop = localize_reduction(tir.PrimFunc([A, B, C], nest)).body.body.body.body.body.seq[1]
    assert loop.annotations[SIMD_REDUCTION][0] == "max"


def test_strided_reduction_is_localized_without_simd():
    A, B, C = _buffers()
    B = tir.decl_buffer((8, 4), "float32", name="B")
    i, j, k = tir.Var("i"), tir.Var("j"), tir.Var("k")
    nest = tir.For(i, 0, 4, "serial", tir.For(j, 0, 4, "serial", tir.For(
        k, 0, 8, "serial", _matmul_block(A, B, C, i, j, k, transposed_b=False))))
    alloc = localize_reduction(tir.PrimFunc([A, B, C], nest)).body.body.body
    loop = alloc.body.body.seq[1]
    assert isinstance(alloc, tir.Allocate) and SIMD_REDUCTION not in loop.annotations


def test_reduction_outside_spatial_loop_is_left_alone():
    A, B, C = _buffers()
    i, j, k = tir.Var("i"), tir.Var("j"), tir.Var("k")
    nest = tir.For(k, 0, 8, "serial", tir.For(i, 0, 4, "serial", tir.For(
        j, 0, 4, "serial", _matmul_block(A, B, C, i, j, k))))
    func = tir.PrimFunc([A, B, C], nest)
    assert localize_reduction(func) is func


def test_revisited_output_is_left_alone():
    # The outer loop `r` does not feed the output index: C[i, j] is reduced twice,
    # and the init must only run on the first pass.
    A, B, C = _buffers()
    r, i, j, k = tir.Var("r"), tir.Var("i"), tir.Var("j"), tir.Var("k")
    nest = tir.For(r, 0, 2, "serial", tir.For(i, 0, 4, "serial", tir.For(j, 0, 4, "serial", tir.For(
        k, 0, 8, "serial", _matmul_block(A, B, C, i, j, k)))))
    func = tir.PrimFunc([A, B, C], nest)
    assert localize_reduction(func) is func


def test_te_reduction_is_localized():
    n = te.var("n", "int64")
    A = te.placeholder((n, 16), name="A")
    k = te.reduce_axis((0, 16), name="k")
    B = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="B")
    after = localize_reduction(te.create_prim_func([A, B]))
    text = repr(after)
    assert "B_local" in text and "T.init" not in text


def test_unused_one_iteration_loop_does_not_block():
    A, B, C = _buffers()
    r, i, j, k = tir.Var("r"), tir.Var("i"), tir.Var("j"), tir.Var("k")
    nest = tir.For(r, 0, 1, "serial", tir.For(i, 0, 4, "serial", tir.For(j, 0, 4, "serial", tir.For(
        k, 0, 8, "serial", _matmul_block(A, B, C, i, j, k)))))
    after = localize_reduction(tir.PrimFunc([A, B, C], nest))
    assert isinstance(after.body.body.body.body, tir.Allocate)


def test_fused_spatial_loops_are_recognised_by_evaluation():
    from rvm.script import tir as T

    @T.prim_func
    def fused(A: T.Buffer((4, 6, 8), "float32"), B: T.Buffer((4, 6), "float32")):
        for f in range(24):
            for k in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(4, f // 6)
                    vj = T.axis.spatial(6, f % 6)
                    vk = T.axis.reduce(8, k)
                    with T.init():
                        B[vi, vj] = T.float32(0)
                    B[vi, vj] = B[vi, vj] + A[vi, vj, vk]

    after = localize_reduction(fused)
    assert isinstance(after.body.block.body.body, tir.Allocate)
