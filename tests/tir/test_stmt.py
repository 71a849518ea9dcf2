import pytest

from rvm import tir
from tests.tir.builders import matmul_func, relu_func


def test_for_kinds_by_name_and_enum():
    i = tir.Var("i")
    body = tir.Evaluate(0)
    for name, kind in [("serial", tir.ForKind.SERIAL), ("parallel", tir.ForKind.PARALLEL),
                       ("vectorized", tir.ForKind.VECTORIZED), ("unroll", tir.ForKind.UNROLLED)]:
        assert tir.For(i, 0, 4, name, body).kind is kind
    assert tir.For(i, 0, 4, tir.ForKind.PARALLEL, body).extent.value == 4
    with pytest.raises(ValueError, match="unknown loop kind"):
        tir.For(i, 0, 4, "sideways", body)


def test_bodies_must_be_statements():
    with pytest.raises(TypeError, match="For body must be a Stmt"):
        tir.For(tir.Var("i"), 0, 4, "serial", tir.Var("x"))


def test_buffer_store_checks_dtype_and_rank():
    A = tir.decl_buffer((4,), "float32", name="A")
    with pytest.raises(TypeError, match="int64"):
        tir.BufferStore(A, tir.Var("x", "int64"), [0])
    with pytest.raises(ValueError, match="1 dimensions"):
        tir.BufferStore(A, 1.0, [0, 1])
    assert tir.BufferStore(A, 1, [0]).value.dtype == "float32"


def test_stmt_seq_flattens():
    a, b, c = tir.Evaluate(1), tir.Evaluate(2), tir.Evaluate(3)
    seq = tir.stmt_seq(a, tir.SeqStmt([b, c]))
    assert isinstance(seq, tir.SeqStmt) and list(seq.seq) == [a, b, c]
    assert tir.stmt_seq(a) is a


def test_block_reads_accept_loads_and_buffers():
    A = tir.decl_buffer((4,), name="A")
    v = tir.IterVar(tir.Range(0, 4), tir.Var("v"), tir.IterVar.DataPar)
    blk = tir.Block([v], [A[v.var]], [A], "b", tir.BufferStore(A, 0.0, [v.var]))
    assert isinstance(blk.reads[0], tir.BufferRegion) and blk.reads[0].region[0].min is v.var
    assert blk.writes[0].region[0].extent.value == 4
    with pytest.raises(TypeError, match="reads/writes"):
        tir.Block([v], [3], [], "b", tir.Evaluate(0))


def test_block_realize_checks_value_count():
    blk = matmul_func().body.block.body.body.body.body.block
    with pytest.raises(ValueError, match="3 iter_vars"):
        tir.BlockRealize([0], True, blk)


def test_if_then_else_and_let():
    x = tir.Var("x")
    s = tir.IfThenElse(x < 2, tir.Evaluate(1))
    assert s.else_case is None
    let = tir.LetStmt(x, 3, tir.Evaluate(x))
    assert let.value.value == 3


def test_text_form_shows_blocks():
    text = matmul_func().script()
    assert 'with T.block("C"):' in text and "with T.init():" in text
    assert "vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])" in text \
        and "C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]" \
        in text
    assert "T.parallel(T.int64(1))" in relu_func(kind="parallel").script()
