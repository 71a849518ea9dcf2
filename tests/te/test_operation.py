import pytest

from rvm import te, tir


def test_placeholder_and_compute_shapes():
    A = te.placeholder((4, 8), name="A")
    assert A.dtype == "float32" and [d.value for d in A.shape] == [4, 8]
    B = te.compute((8, 4), lambda i, j: A[j, i], name="B")
    assert B.name == "B" and [iv.var.name_hint for iv in B.op.axis] == ["i", "j"]
    assert B.op.input_tensors == [A]


def test_compute_arity_must_match_shape():
    A = te.placeholder((4, 8), name="A")
    with pytest.raises(ValueError, match="2 dimensions"):
        te.compute(A.shape, lambda i: A[i, 0])
    assert te.compute(A.shape, lambda *idx: A[idx]).op.axis[1].var.name_hint == "i1"


def test_sum_over_reduce_axis():
    A = te.placeholder((4, 8), name="A")
    k = te.reduce_axis((0, 8), name="k")
    S = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="S")
    body = S.op.body[0]
    assert isinstance(body, tir.Reduce) and body.combiner == "sum" and body.init.value == 0.0
    assert S.op.reduce_axis[0] is k


def test_max_min_two_operands_are_elementwise():
    A = te.placeholder((4,), name="A")
    e = te.max(A[0], 0)
    assert isinstance(e, tir.Max) and e.b.dtype == "float32"
    assert isinstance(te.min(A[0], 1.0), tir.Min)


def test_max_reduction_identity_is_lowest():
    A = te.placeholder((4,), name="A")
    k = te.reduce_axis((0, 4), name="k")
    r = te.max(A[k], axis=k)
    assert r.combiner == "max" and r.init.value < -1e38


def test_reduction_must_be_whole_body():
    A = te.placeholder((4,), name="A")
    k = te.reduce_axis((0, 4), name="k")
    with pytest.raises(ValueError, match="whole body"):
        te.compute((1,), lambda i: te.sum(A[k], axis=k) * 2)


def test_wrong_index_count():
    A = te.placeholder((4, 4), name="A")
    with pytest.raises(ValueError, match="2 dimensions"):
        A[0]


def test_extern_builds_buffers_and_call():
    A = te.placeholder((4,), name="A")
    C = te.extern(A.shape, [A], lambda ins, outs: tir.call_packed("env.f", ins[0], outs[0]),
                  name="C")
    op = C.op
    assert isinstance(op, te.ExternOp) and C.dtype == "float32"
    call = op.body.value
    assert call.op == "tir.call_packed" and call.args[1] is op.input_placeholders[0]
    assert op.input_tensors == [A]


def test_shapes_with_int64_vars():
    n = tir.Var("n", "int64")
    A = te.placeholder((2, n), name="A")
    assert A.shape[0].dtype == "int64"
    B = te.compute(A.shape, lambda i, j: A[i, j] * 2)
    assert B.op.axis[0].var.dtype == "int64"


def test_call_form_and_math_namespace():
    A = te.placeholder((4, 4), name="A")
    B = te.compute(A.shape, lambda *i: te.exp(A(*i)) + te.sqrt(A[i]), name="B")
    assert isinstance(B.op.body[0].a, tir.Call) and B.op.body[0].a.op == "tir.exp"
    assert te.const(1.0).dtype == "float32"


def test_shape_equality_assertion_of_seed_program():
    # Seed 004's te_matmul asserts ``A.shape[1] == B.shape[0]``: constants fold to True.
    A = te.placeholder((128, 64), name="A")
    B = te.placeholder((64, 32), name="B")
    assert A.shape[1] == B.shape[0]
    assert not (A.shape[0] == B.shape[0])
    n = tir.Var("n", "int64")
    X, Y = te.placeholder((n, 4), name="X"), te.placeholder((4, n), name="Y")
    assert X.shape[0] == Y.shape[1]
