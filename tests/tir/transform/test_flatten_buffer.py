"""FlattenBuffer: N-d accesses become 1-d accesses at row-major offsets."""
from rvm import tir
from rvm.ir.base import assert_structural_equal
from rvm.tir.transform.flatten_buffer import flatten_buffer


def test_accesses_and_allocations_are_flattened():
    A = tir.decl_buffer((4, 8), "float32", name="A")
    B = tir.decl_buffer((4, 8), "float32", name="B")
    T = tir.decl_buffer((4, 8), "float32", name="T")
    i, j = tir.Var("i"), tir.Var("j")
    body = tir.stmt_seq(tir.BufferStore(T, A[i, j] * 2.0, [i, j]),
                        tir.BufferStore(B, T[i, j], [i, j]))
    loops = tir.For(i, 0, 4, "serial", tir.For(j, 0, 8, "serial", body))
    func = tir.PrimFunc([A, B], tir.Allocate(T.data, "float32", T.shape, True,
                                             tir.DeclBuffer(T, loops)))
    after = flatten_buffer(func)

    fa = tir.Buffer(A.data, "float32", (32,), name="A")
    fb = tir.Buffer(B.data, "float32", (32,), name="B")
    ft = tir.Buffer(T.data, "float32", (32,), name="T")
    flat = tir.stmt_seq(tir.BufferStore(ft, fa[i * 8 + j] * 2.0, [i * 8 + j]),
                        tir.BufferStore(fb, ft[i * 8 + j], [i * 8 + j]))
    expected = tir.Allocate(T.data, "float32", (32,), True, tir.DeclBuffer(
        ft, tir.For(i, 0, 4, "serial", tir.For(j, 0, 8, "serial", flat))))
    assert_structural_equal(after.body, expected)
    assert after.buffer_map[after.params[0]] is A  # the prologue still sees the 2-d shape


def test_symbolic_shapes_and_packed_buffers():
    n = tir.Var("n", "int64")
    A = tir.decl_buffer((n, 3), "float32", name="A")
    i = tir.Var("i", "int64")
    call = tir.Evaluate(tir.call_packed("f", A))
    store = tir.BufferStore(A, tir.const(1, "float32"), [i, tir.const(2, "int64")])
    func = tir.PrimFunc([A], tir.stmt_seq(tir.For(i, 0, n, "serial", store), call))
    after = flatten_buffer(func)
    loop, packed = after.body.seq
    assert loop.body.buffer.shape[0].dtype == "int64" and len(loop.body.buffer.shape) == 1
    assert_structural_equal(loop.body.indices[0], i * 3 + 2)
    assert packed.value.args[1] is A


def test_one_dimensional_function_is_unchanged():
    A = tir.decl_buffer((8,), "float32", name="A")
    i = tir.Var("i")
    func = tir.PrimFunc([A], tir.For(i, 0, 8, "serial", tir.BufferStore(A, A[i] + 1.0, [i])))
    assert flatten_buffer(func) is func
