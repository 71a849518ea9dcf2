"""PrimFuncs for the differential tests: each with inputs and a numpy reference.

A case is (name, build() -> PrimFunc, inputs(rng) -> argument list with zeroed
outputs, reference(args) -> {argument index: expected array}).
"""
import numpy as np

from rvm import te, tir, topi
from rvm.tir import IterVar, Range
from rvm.tir.stmt import ForKind
from rvm.tir.stmt_functor import StmtMutator

CASES = {}


def case(name, tol=1e-5):
    def register(fn):
        build, inputs, reference = fn()
        CASES[name] = (build, inputs, reference, tol)
        return fn
    return register


def set_loop_kind(func, name, kind):
    """``func`` with the loops named ``name`` turned into ``kind`` loops."""

    class _Kind(StmtMutator):
        def visit_for_(self, op):
            op = self._generic(op)
            return op.with_fields(kind=kind) if op.loop_var.name_hint == name else op

    return func.with_body(_Kind().visit(func.body))


def f32(rng, *shape):
    return rng.standard_normal(shape).astype("float32")


def zeros(shape, dtype="float32"):
    return np.zeros(shape, dtype)


@case("add")
def _add():
    def build():
        A, B = te.placeholder((16,), name="A"), te.placeholder((16,), name="B")
        return te.create_prim_func([A, B, te.compute((16,), lambda i: A[i] + B[i], name="C")])
    return build, lambda r: [f32(r, 16), f32(r, 16), zeros(16)], lambda a: {2: a[0] + a[1]}


@case("broadcast_bias")
def _bias():
    def build():
        A, b = te.placeholder((4, 8), name="A"), te.placeholder((8,), name="b")
        return te.create_prim_func([A, b, te.compute((4, 8), lambda i, j: A[i, j] + b[j])])
    return build, lambda r: [f32(r, 4, 8), f32(r, 8), zeros((4, 8))], lambda a: {2: a[0] + a[1]}


@case("relu")
def _relu():
    def build():
        A = te.placeholder((3, 5), name="A")
        return te.create_prim_func([A, te.compute((3, 5), lambda i, j: tir.max(A[i, j], 0.0))])
    return build, lambda r: [f32(r, 3, 5), zeros((3, 5))], lambda a: {1: np.maximum(a[0], 0)}


@case("row_sum")
def _row_sum():
    def build():
        A = te.placeholder((6, 10), name="A")
        k = te.reduce_axis((0, 10), name="k")
        return te.create_prim_func([A, te.compute((6,), lambda i: te.sum(A[i, k], axis=k))])
    return build, lambda r: [f32(r, 6, 10), zeros(6)], lambda a: {1: a[0].sum(1)}


@case("matmul_symbolic")
def _matmul():
    def build():
        n, m, l = te.var("n", "int64"), te.var("m", "int64"), te.var("l", "int64")
        A, B = te.placeholder((n, l), name="A"), te.placeholder((l, m), name="B")
        k = te.reduce_axis((0, l), name="k")
        C = te.compute((n, m), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
        return te.create_prim_func([A, B, C])
    return build, lambda r: [f32(r, 5, 7), f32(r, 7, 3), zeros((5, 3))], \
        lambda a: {2: a[0] @ a[1]}


@case("linear0_local_intermediate")
def _linear0():
    def build():
        m, n = te.var("m", "int64"), te.var("n", "int64")
        X, W = te.placeholder((1, m), name="X"), te.placeholder((n, m), name="W")
        B = te.placeholder((n,), name="B")
        k = te.reduce_axis((0, m), name="k")
        Y = te.compute((1, n), lambda i, j: te.sum(X[i, k] * W[j, k], axis=k), name="Y")
        Z = te.compute((1, n), lambda i, j: Y[i, j] + B[j], name="Z")
        return te.create_prim_func([X, W, B, Z])
    return build, lambda r: [f32(r, 1, 20), f32(r, 6, 20), f32(r, 6), zeros((1, 6))], \
        lambda a: {3: a[0] @ a[1].T + a[2]}


@case("softmax")
def _softmax():
    def build():
        A = te.placeholder((4, 9), name="A")
        k1, k2 = te.reduce_axis((0, 9), name="k1"), te.reduce_axis((0, 9), name="k2")
        mx = te.compute((4,), lambda i: te.max(A[i, k1], axis=k1), name="mx")
        ex = te.compute((4, 9), lambda i, j: tir.exp(A[i, j] - mx[i]), name="ex")
        sm = te.compute((4,), lambda i: te.sum(ex[i, k2], axis=k2), name="sm")
        return te.create_prim_func([A, te.compute((4, 9), lambda i, j: ex[i, j] / sm[i])])

    def ref(a):
        e = np.exp(a[0] - a[0].max(1, keepdims=True))
        return {1: e / e.sum(1, keepdims=True)}
    return build, lambda r: [f32(r, 4, 9) * 3, zeros((4, 9))], ref


@case("conditional_if_then_else")
def _cond():
    def build():
        A = te.placeholder((12,), name="A")
        return te.create_prim_func([A, te.compute(
            (12,), lambda i: tir.if_then_else(A[i] > 0.0, A[i] * 2.0, -A[i]))])
    return build, lambda r: [f32(r, 12), zeros(12)], \
        lambda a: {1: np.where(a[0] > 0, a[0] * 2, -a[0])}


@case("clip_select")
def _clip():
    def build():
        A = te.placeholder((12,), name="A")
        lo, hi = tir.const(-0.5, "float32"), tir.const(0.5, "float32")
        return te.create_prim_func([A, te.compute((12,), lambda i: tir.Select(
            A[i] < lo, lo, tir.Select(A[i] > hi, hi, A[i])))])
    return build, lambda r: [f32(r, 12), zeros(12)], lambda a: {1: np.clip(a[0], -0.5, 0.5)}


@case("floordiv_floormod_negative")
def _floordiv():
    def build():
        A = te.placeholder((41,), "int32", name="A")
        return te.create_prim_func([A, te.compute((41,), lambda i: A[i] // 3 * 10 + A[i] % 5)])
    return build, lambda r: [np.arange(-20, 21, dtype="int32"), zeros(41, "int32")], \
        lambda a: {1: a[0] // 3 * 10 + a[0] % 5}


@case("reshape_by_index_math")
def _reshape():
    def build():
        A = te.placeholder((4, 4), name="A")
        return te.create_prim_func([A, te.compute((16,), lambda i: A[i // 4, i % 4])])
    return build, lambda r: [f32(r, 4, 4), zeros(16)], lambda a: {1: a[0].reshape(-1)}


@case("cast_float_to_int")
def _f2i():
    def build():
        A = te.placeholder((10,), name="A")
        return te.create_prim_func([A, te.compute((10,), lambda i: A[i].astype("int32"))])
    return build, lambda r: [f32(r, 10) * 10, zeros(10, "int32")], \
        lambda a: {1: np.trunc(a[0]).astype("int32")}


@case("cast_int_to_float64")
def _i2f():
    def build():
        A = te.placeholder((10,), "int32", name="A")
        return te.create_prim_func([A, te.compute((10,), lambda i: A[i].astype("float64") * 0.5)])
    return build, lambda r: [r.integers(-50, 50, 10).astype("int32"), zeros(10, "float64")], \
        lambda a: {1: a[0].astype("float64") * 0.5}


@case("compare_to_bool")
def _cmp():
    def build():
        A, B = te.placeholder((9,), name="A"), te.placeholder((9,), name="B")
        return te.create_prim_func([A, B, te.compute((9,), lambda i: A[i] > B[i])])
    return build, lambda r: [f32(r, 9), f32(r, 9), zeros(9, "bool")], \
        lambda a: {2: a[0] > a[1]}


@case("bool_mask_select")
def _mask():
    def build():
        M = te.placeholder((9,), "bool", name="M")
        X, Y = te.placeholder((9,), name="X"), te.placeholder((9,), name="Y")
        return te.create_prim_func([M, X, Y, te.compute(
            (9,), lambda i: tir.if_then_else(M[i], X[i], Y[i]))])
    return build, lambda r: [r.random(9) > 0.5, f32(r, 9), f32(r, 9), zeros(9)], \
        lambda a: {3: np.where(a[0], a[1], a[2])}


@case("int64_arith")
def _i64():
    def build():
        A, B = te.placeholder((8,), "int64", name="A"), te.placeholder((8,), "int64", name="B")
        return te.create_prim_func([A, B, te.compute((8,), lambda i: A[i] * B[i] + 7)])
    gen = lambda r: [r.integers(-1000, 1000, 8), r.integers(-1000, 1000, 8), zeros(8, "int64")]
    return build, gen, lambda a: {2: a[0] * a[1] + 7}


@case("float64_math")
def _f64():
    def build():
        A = te.placeholder((8,), "float64", name="A")
        return te.create_prim_func([A, te.compute((8,), lambda i: tir.exp(A[i]) + tir.sqrt(
            tir.abs(A[i])) + tir.tanh(A[i]) + tir.log(tir.abs(A[i]) + 1.0))])

    def ref(a):
        x = a[0]
        return {1: np.exp(x) + np.sqrt(np.abs(x)) + np.tanh(x) + np.log(np.abs(x) + 1)}
    return build, lambda r: [r.standard_normal(8), zeros(8, "float64")], ref


@case("uint8_wraparound")
def _u8():
    def build():
        A, B = te.placeholder((8,), "uint8", name="A"), te.placeholder((8,), "uint8", name="B")
        return te.create_prim_func([A, B, te.compute((8,), lambda i: A[i] + B[i])])
    gen = lambda r: [r.integers(0, 256, 8).astype("uint8"), r.integers(0, 256, 8).astype("uint8"),
                     zeros(8, "uint8")]
    return build, gen, lambda a: {2: a[0] + a[1]}


@case("int8_sum_to_int32")
def _i8sum():
    def build():
        A = te.placeholder((5, 30), "int8", name="A")
        k = te.reduce_axis((0, 30), name="k")
        return te.create_prim_func([A, te.compute(
            (5,), lambda i: te.sum(A[i, k].astype("int32"), axis=k))])
    return build, lambda r: [r.integers(-128, 128, (5, 30)).astype("int8"), zeros(5, "int32")], \
        lambda a: {1: a[0].astype("int32").sum(1)}


@case("parallel_loop")
def _parallel():
    def build():
        A = te.placeholder((64, 8), name="A")
        func = te.create_prim_func([A, te.compute((64, 8), lambda i, j: A[i, j] * 3.0 + 1.0)])
        return set_loop_kind(func, "i", ForKind.PARALLEL)
    return build, lambda r: [f32(r, 64, 8), zeros((64, 8))], lambda a: {1: a[0] * 3 + 1}


@case("vectorized_loop")
def _vectorized():
    def build():
        A, B = te.placeholder((4, 16), name="A"), te.placeholder((4, 16), name="B")
        func = te.create_prim_func([A, B, te.compute((4, 16), lambda i, j: A[i, j] * B[i, j])])
        return set_loop_kind(func, "j", ForKind.VECTORIZED)
    return build, lambda r: [f32(r, 4, 16), f32(r, 4, 16), zeros((4, 16))], \
        lambda a: {2: a[0] * a[1]}


@case("unrolled_reduction")
def _unrolled():
    def build():
        A = te.placeholder((6, 4), name="A")
        k = te.reduce_axis((0, 4), name="k")
        func = te.create_prim_func([A, te.compute((6,), lambda i: te.sum(A[i, k], axis=k))])
        return set_loop_kind(func, "k", ForKind.UNROLLED)
    return build, lambda r: [f32(r, 6, 4), zeros(6)], lambda a: {1: a[0].sum(1)}


@case("matmul_relu_fused")
def _fused():
    def build():
        A, B = te.placeholder((8, 8), name="A"), te.placeholder((8, 8), name="B")
        k = te.reduce_axis((0, 8), name="k")
        C = te.compute((8, 8), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="matmul")
        return te.create_prim_func([A, B, te.compute(C.shape, lambda i, j: te.max(C[i, j], 0.0))])
    return build, lambda r: [f32(r, 8, 8), f32(r, 8, 8), zeros((8, 8))], \
        lambda a: {2: np.maximum(a[0] @ a[1], 0)}


@case("min_and_prod_reductions")
def _minprod():
    def build():
        A = te.placeholder((3, 6), name="A")
        k1, k2 = te.reduce_axis((0, 6), name="k1"), te.reduce_axis((0, 6), name="k2")
        lo = te.compute((3,), lambda i: te.min(A[i, k1], axis=k1), name="lo")
        pr = te.compute((3,), lambda i: te.prod(A[i, k2], axis=k2), name="pr")
        return te.create_prim_func([A, lo, pr])
    return build, lambda r: [f32(r, 3, 6) + 1, zeros(3), zeros(3)], \
        lambda a: {1: a[0].min(1), 2: a[0].prod(1)}


@case("transpose")
def _transpose():
    def build():
        A = te.placeholder((3, 7), name="A")
        return te.create_prim_func([A, te.compute((7, 3), lambda i, j: A[j, i])])
    return build, lambda r: [f32(r, 3, 7), zeros((7, 3))], lambda a: {1: a[0].T}


@case("scalar_parameters")
def _scalars():
    def build():
        A = te.placeholder((6,), name="A")
        alpha, shift = te.var("alpha", "float32"), te.var("shift", "int32")
        B = te.compute((6,), lambda i: A[i] * alpha + shift.astype("float32"), name="B")
        return te.create_prim_func([A, alpha, shift, B])
    return build, lambda r: [f32(r, 6), 2.5, 3, zeros(6)], \
        lambda a: {3: a[0] * np.float32(2.5) + 3}


@case("mean_symbolic")
def _mean():
    def build():
        n = te.var("n", "int64")
        A = te.placeholder((4, n), name="A")
        k = te.reduce_axis((0, n), name="k")
        S = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="S")
        return te.create_prim_func([A, te.compute((4,), lambda i: S[i] / n.astype("float32"))])
    return build, lambda r: [f32(r, 4, 11), zeros(4)], lambda a: {1: a[0].mean(1)}


@case("padded_conv1d")
def _conv():
    def build():
        A, W = te.placeholder((10,), name="A"), te.placeholder((3,), name="W")
        k = te.reduce_axis((0, 3), name="k")
        return te.create_prim_func([A, W, te.compute((10,), lambda i: te.sum(tir.if_then_else(
            tir.all(i + k >= 1, i + k < 11), A[i + k - 1], 0.0) * W[k], axis=k))])
    return build, lambda r: [f32(r, 10), f32(r, 3), zeros(10)], \
        lambda a: {2: np.convolve(a[0], a[1][::-1], mode="same")}


@case("sigmoid_rsqrt")
def _sigmoid():
    def build():
        A = te.placeholder((8,), name="A")
        return te.create_prim_func([A, te.compute(
            (8,), lambda i: tir.sigmoid(A[i]) + tir.rsqrt(A[i] * A[i] + 1.0))])
    return build, lambda r: [f32(r, 8), zeros(8)], \
        lambda a: {1: 1 / (1 + np.exp(-a[0])) + 1 / np.sqrt(a[0] * a[0] + 1)}


@case("rounding_and_erf")
def _rounding():
    def build():
        A = te.placeholder((8,), name="A")
        return te.create_prim_func([A, te.compute((8,), lambda i: tir.round(A[i]) + tir.floor(
            A[i]) * 10.0 + tir.ceil(A[i]) * 100.0 + tir.erf(A[i]))])

    def ref(a):
        from math import erf
        x = a[0]
        return {1: np.rint(x) + np.floor(x) * 10 + np.ceil(x) * 100 + np.vectorize(erf)(x)}
    return build, lambda r: [np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.4, 0.3, -0.7], "float32"),
                             zeros(8)], ref


@case("triangular_where_reduction")
def _where():
    def build():
        A = te.placeholder((5, 5), name="A")
        k = te.reduce_axis((0, 5), name="k")
        return te.create_prim_func([A, te.compute((5,), lambda i: te.sum(A[i, k], axis=k,
                                                                          where=k <= i))])
    return build, lambda r: [f32(r, 5, 5), zeros(5)], \
        lambda a: {1: np.tril(a[0]).sum(1)}


@case("guarded_init_reduce_loop_outside")
def _guarded():
    def build():
        A = tir.decl_buffer((4, 6), "float32", name="A")
        B = tir.decl_buffer((4,), "float32", name="B")
        k, i = tir.Var("k"), tir.Var("i")
        vi = IterVar(Range(0, 4), "vi", IterVar.DataPar)
        vk = IterVar(Range(0, 6), "vk", IterVar.CommReduce)
        block = tir.Block([vi, vk], [], [], "B",
                          tir.BufferStore(B, B[vi.var] + A[vi.var, vk.var], [vi.var]),
                          init=tir.BufferStore(B, tir.const(0, "float32"), [vi.var]))
        nest = tir.For(k, 0, 6, "serial", tir.For(i, 0, 4, "serial",
                                                  tir.BlockRealize([i, k], True, block)))
        root = tir.BlockRealize([], True, tir.Block([], [], [], "root", nest))
        return tir.PrimFunc([A, B], root, attrs={"tir.noalias": True})
    return build, lambda r: [f32(r, 4, 6), zeros(4) + 100], lambda a: {1: a[0].sum(1)}


@case("integer_division_by_data")
def _division():
    def build():
        A, B = te.placeholder((10,), "int32", name="A"), te.placeholder((10,), "int32", name="B")
        return te.create_prim_func([A, B, te.compute((10,), lambda i: (
            tir.truncdiv(A[i], B[i]) * 1000 + tir.truncmod(A[i], B[i]) * 100
            + A[i] // B[i] * 10 + A[i] % B[i]))])

    def ref(a):
        x, y = a[0].astype("int64"), a[1].astype("int64")
        safe = np.where(y == 0, 1, y)
        trunc_q = np.where(y == 0, 0, np.trunc(x / safe).astype("int64"))
        trunc_r = np.where(y == 0, 0, x - safe * np.trunc(x / safe).astype("int64"))
        floor_q = np.where(y == 0, 0, x // safe)
        floor_r = np.where(y == 0, 0, x % safe)
        return {2: (trunc_q * 1000 + trunc_r * 100 + floor_q * 10 + floor_r).astype("int32")}
    inputs = lambda r: [np.array([7, -7, 7, -7, 5, -5, 9, 0, 13, -13], "int32"),  # noqa: E731
                        np.array([2, 2, -2, -2, 0, 0, -1, 3, 1, -1], "int32"), zeros(10, "int32")]
    return build, inputs, ref



@case("topi_dense_symbolic_batch")
def _dense():
    def build():
        n = te.var("n", "int64")
        x, w = te.placeholder((n, 16), name="x"), te.placeholder((8, 16), name="w")
        b = te.placeholder((8,), name="b")
        return te.create_prim_func([x, w, b, topi.nn.dense(x, w, b)])
    return build, lambda r: [f32(r, 3, 16), f32(r, 8, 16), f32(r, 8), zeros((3, 8))], \
        lambda a: {3: a[0] @ a[1].T + a[2]}


@case("topi_softmax_symbolic")
def _topi_softmax():
    def build():
        n = te.var("n", "int64")
        x = te.placeholder((n, 16), name="x")
        return te.create_prim_func([x, topi.nn.softmax(x)])

    def ref(a):
        e = np.exp(a[0] - a[0].max(1, keepdims=True))
        return {1: e / e.sum(1, keepdims=True)}
    return build, lambda r: [f32(r, 3, 16), zeros((3, 16))], ref


@case("topi_reshape_symbolic")
def _topi_reshape():
    def build():
        n = te.var("n", "int64")
        x = te.placeholder((n, 16), name="x")
        return te.create_prim_func([x, topi.reshape(x, (n * 4, 4))])
    return build, lambda r: [f32(r, 3, 16), zeros((12, 4))], lambda a: {1: a[0].reshape(12, 4)}
