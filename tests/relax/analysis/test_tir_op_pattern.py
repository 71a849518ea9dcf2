"""analyze_op_pattern_kind: the fusion pattern of a kernel, from its blocks' index patterns."""
import pytest

from rvm import te, topi
from rvm.relax.analysis.tir_op_pattern import OpPatternKind, analyze_op_pattern_kind
from rvm.script import tir as T
from rvm.tir.expr import Var

K = OpPatternKind
n = Var("n", "int64")
X = te.placeholder((n, 16), name="X")
W = te.placeholder((32, 16), name="W")
B = te.placeholder((16,), name="B")
WT = te.placeholder((16, 32), name="WT")
I = te.placeholder((4, 3, 8, 8), name="I")


def _kind(*tensors):
    return analyze_op_pattern_kind(te.create_prim_func(list(tensors)))


CASES = {
    "relu": (lambda: (X, topi.nn.relu(X)), K.ELEMWISE),
    "add": (lambda: (X, topi.add(X, X)), K.ELEMWISE),
    "bias add": (lambda: (X, B, topi.add(X, B)), K.ELEMWISE),
    "broadcast": (lambda: (X, B, te.compute((n, 16), lambda i, j: B[j], name="bc")),
                  K.BROADCAST),
    "transpose": (lambda: (X, topi.transpose(X, [1, 0])), K.INJECTIVE),
    "reshape": (lambda: (X, topi.reshape(X, [n * 2, 8])), K.INJECTIVE),
    "sum": (lambda: (X, topi.sum(X, axis=1)), K.COMM_REDUCE),
    "max": (lambda: (X, topi.max(X, axis=0)), K.COMM_REDUCE),
    "mean": (lambda: (X, topi.mean(X, axis=1)), K.OUT_EWISE_FUSABLE),
    "dense": (lambda: (X, W, topi.nn.dense(X, W)), K.OUT_EWISE_FUSABLE),
    "matmul": (lambda: (X, WT, topi.matmul(X, WT)), K.OUT_EWISE_FUSABLE),
    "softmax": (lambda: (X, topi.nn.softmax(X)), K.OUT_EWISE_FUSABLE),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_topi_kernels(name):
    make, kind = CASES[name]
    assert _kind(*make()) == kind


def test_a_window_reduction_is_out_elementwise_fusable():
    k = te.reduce_axis((0, 2), name="k")
    pool = te.compute((4, 3, 8, 7), lambda a, b, c, d: te.max(I[a, b, c, d + k], axis=k),
                      name="pool")
    assert _kind(I, pool) == K.OUT_EWISE_FUSABLE


@T.prim_func
def two_stores(a: T.Buffer((8,), "float32"), b: T.Buffer((8,), "float32")):
    for i in range(4):
        with T.block("b"):
            vi = T.axis.spatial(4, i)
            b[vi] = a[vi]
            b[vi + 4] = a[vi]


@T.prim_func
def no_blocks(a: T.Buffer((8,), "float32"), b: T.Buffer((8,), "float32")):
    for i in range(8):
        b[i] = a[i]


@T.prim_func
def gather(a: T.Buffer((8,), "float32"), idx: T.Buffer((4,), "int32"),
           b: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("b"):
            vi = T.axis.spatial(4, i)
            b[vi] = a[idx[vi]]


@T.prim_func
def packed_call(a: T.Buffer((8,), "float32"), b: T.Buffer((8,), "float32")):
    with T.block("call"):
        T.evaluate(T.call_packed("env.copy", a.data, b.data))


def test_kernels_that_are_not_simple_computes_are_opaque():
    assert analyze_op_pattern_kind(two_stores) == K.OPAQUE
    assert analyze_op_pattern_kind(no_blocks) == K.OPAQUE
    assert analyze_op_pattern_kind(packed_call) == K.OPAQUE


def test_an_indirect_read_is_injective():
    assert analyze_op_pattern_kind(gather) == K.INJECTIVE


def test_bad_input_names_what_was_expected():
    with pytest.raises(TypeError, match="expects a tir.PrimFunc, got int"):
        analyze_op_pattern_kind(3)
