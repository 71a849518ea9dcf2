"""Small TIR programs shared by the tir tests, built with the node constructors."""
from rvm import tir


def relu_func(names=("X", "Y", "i", "j", "vi", "vj", "n"), dtype="float32", kind="serial"):
    """relu over a (1, n) buffer in TensorIR form; ``names`` renames everything."""
    bx, by, li, lj, ai, aj, nn = names
    n = tir.Var(nn, "int64")
    X = tir.decl_buffer((1, n), dtype, name=bx)
    Y = tir.decl_buffer((1, n), dtype, name=by)
    i, j = tir.Var(li, "int64"), tir.Var(lj, "int64")
    vi = tir.IterVar(tir.Range(tir.const(0, "int64"), tir.const(1, "int64")),
                     tir.Var(ai, "int64"), tir.IterVar.DataPar)
    vj = tir.IterVar(tir.Range(tir.const(0, "int64"), n), tir.Var(aj, "int64"),
                     tir.IterVar.DataPar)
    store = tir.BufferStore(Y, tir.max(X[vi.var, vj.var], 0.0), [vi.var, vj.var])
    block = tir.Block([vi, vj], [X[vi.var, vj.var:vj.var + 1]], [Y[vi.var, vj.var:vj.var + 1]],
                      "Y", store)
    loops = tir.For(i, 0, 1, kind, tir.For(j, 0, n, "serial",
                                           tir.BlockRealize([i, j], True, block)))
    root = tir.BlockRealize([], True, tir.Block([], [], [], "root", loops))
    return tir.PrimFunc([X, Y], root).with_attr("global_symbol", "relu0")


def matmul_func(m=4, n=5, k=6):
    """C = A @ B with an init block, in TensorIR form."""
    A = tir.decl_buffer((m, k), name="A")
    B = tir.decl_buffer((k, n), name="B")
    C = tir.decl_buffer((m, n), name="C")
    i, j, r = tir.Var("i"), tir.Var("j"), tir.Var("k")
    vi = tir.IterVar(tir.Range(0, m), tir.Var("vi"), tir.IterVar.DataPar)
    vj = tir.IterVar(tir.Range(0, n), tir.Var("vj"), tir.IterVar.DataPar)
    vk = tir.IterVar(tir.Range(0, k), tir.Var("vk"), tir.IterVar.CommReduce)
    a, b, c = vi.var, vj.var, vk.var
    body = tir.BufferStore(C, C[a, b] + A[a, c] * B[c, b], [a, b])
    init = tir.BufferStore(C, 0.0, [a, b])
    block = tir.Block([vi, vj, vk], [A[a, c], B[c, b]], [C[a, b]], "C", body, init=init)
    nest = tir.For(i, 0, m, "serial", tir.For(j, 0, n, "serial", tir.For(
        r, 0, k, "serial", tir.BlockRealize([i, j, r], True, block))))
    root = tir.BlockRealize([], True, tir.Block([], [], [], "root", nest))
    return tir.PrimFunc([A, B, C], root).with_attr("global_symbol", "main")
