"""TensorIR programs in the style of TVM's own tests (tests/python/tvmscript/
test_tvmscript_roundtrip.py, tests/python/tir-*): each parses, prints and parses back equal,
and builds with ``rvm.build`` and runs against numpy."""
import numpy as np

import rvm
from rvm.ir import assert_structural_equal
from rvm.script import from_source, ir as I, tir as T

rng = np.random.default_rng(7)


def _round_trip(func):
    assert_structural_equal(from_source(func.script()), func)
    return func


def _run(func, *arrays):
    """Builds ``func`` (a PrimFunc or a module of one) and calls it on NDArrays of ``arrays``;
    returns them as numpy arrays afterwards."""
    lib = rvm.build(func, target="c")
    nds = [rvm.nd.array(a) for a in arrays]
    name = func.attrs["global_symbol"] if isinstance(func, rvm.tir.PrimFunc) else "main"
    lib[name](*nds)
    return [nd.numpy() for nd in nds]


def test_matmul_with_init():
    @T.prim_func
    def matmul(a: T.handle, b: T.handle, c: T.handle):
        A = T.match_buffer(a, [16, 8])
        B = T.match_buffer(b, [8, 12])
        C = T.match_buffer(c, [16, 12])
        for i, j, k in T.grid(16, 12, 8):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    a, b = rng.random((16, 8), "float32"), rng.random((8, 12), "float32")
    c = _run(_round_trip(matmul), a, b, np.zeros((16, 12), "float32"))[2]
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def test_explicit_axes_reads_writes():
    @T.prim_func
    def transpose_add(A: T.Buffer((4, 6), "float32"), B: T.Buffer((6, 4), "float32"),
                      C: T.Buffer((6, 4), "float32")):
        T.func_attr({"global_symbol": "transpose_add", "tir.noalias": T.bool(True)})
        for i0, i1 in T.grid(6, 4):
            with T.block("C"):
                v0 = T.axis.spatial(6, i0)
                v1 = T.axis.spatial(4, i1)
                T.reads(A[v1, v0], B[v0, v1])
                T.writes(C[v0, v1])
                C[v0, v1] = A[v1, v0] + B[v0, v1]

    a, b = rng.random((4, 6), "float32"), rng.random((6, 4), "float32")
    c = _run(_round_trip(transpose_add), a, b, np.zeros((6, 4), "float32"))[2]
    np.testing.assert_allclose(c, a.T + b, rtol=1e-6)


def test_unnamed_blocks_and_short_axes():
    @T.prim_func
    def row_max(A: T.Buffer((8, 5), "float32"), B: T.Buffer((8,), "float32")):
        for i, k in T.grid(8, 5):
            with T.block():
                vi = T.axis.S(8, i)
                vk = T.axis.R(5, k)
                with T.init():
                    B[vi] = T.min_value("float32")
                B[vi] = T.max(B[vi], A[vi, vk])

    a = rng.standard_normal((8, 5)).astype("float32")
    b = _run(_round_trip(row_max), a, np.zeros(8, "float32"))[1]
    np.testing.assert_array_equal(b, a.max(axis=1))


def test_fused_loop_axis_bindings():
    @T.prim_func
    def copy_fused(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
        for fused in range(32):
            with T.block("copy"):
                vi = T.axis.spatial(4, fused // 8)
                vj = T.axis.spatial(8, fused % 8)
                B[vi, vj] = A[vi, vj] * T.float32(3)

    a = rng.random((4, 8), "float32")
    np.testing.assert_allclose(_run(_round_trip(copy_fused), a, np.zeros_like(a))[1], 3 * a,
                               rtol=1e-6)


def test_intrinsics_with_dtype():
    @T.prim_func
    def gelu(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in T.serial(16):
            with T.block("gelu"):
                vi = T.axis.remap("S", [i])
                B[vi] = A[vi] * T.float32(0.5) * (
                    T.float32(1) + T.erf(A[vi] * T.float32(0.70710678), dtype="float32"))

    import math
    a = rng.standard_normal(16).astype("float32")
    expected = np.array([v * 0.5 * (1 + math.erf(v * 0.70710678)) for v in a], "float32")
    np.testing.assert_allclose(_run(_round_trip(gelu), a, np.zeros_like(a))[1], expected,
                               rtol=1e-5, atol=1e-6)


def test_immediate_constructors():
    @T.prim_func
    def affine(A: T.Buffer((6,), "float32"), B: T.Buffer((6,), "float32")):
        for i in range(6):
            with T.block("B"):
                vi = T.axis.spatial(6, i)
                B[vi] = A[vi] * T.FloatImm("float32", 0.25) + T.Cast("float32",
                                                                      T.IntImm("int32", 3))

    a = rng.random(6, "float32")
    np.testing.assert_allclose(_run(_round_trip(affine), a, np.zeros_like(a))[1], a * 0.25 + 3,
                               rtol=1e-6)


def test_loop_kinds_and_if_then_else():
    @T.prim_func
    def relu_kinds(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4, 16), "float32")):
        for i in T.parallel(4):
            for j0 in T.unroll(4):
                for j1 in T.vectorized(4):
                    with T.block("B"):
                        vi = T.axis.spatial(4, i)
                        vj = T.axis.spatial(16, j0 * 4 + j1)
                        B[vi, vj] = T.if_then_else(A[vi, vj] > T.float32(0), A[vi, vj],
                                                   T.float32(0))

    a = rng.standard_normal((4, 16)).astype("float32")
    np.testing.assert_array_equal(_run(_round_trip(relu_kinds), a, np.zeros_like(a))[1],
                                  np.maximum(a, 0))


def test_block_match_buffer_regions():
    @T.prim_func
    def tile_copy(a: T.handle, c: T.handle):
        A = T.match_buffer(a, (8, 8), "float32", offset_factor=1)
        C = T.match_buffer(c, (8, 8), "float32", offset_factor=1)
        for i, j in T.grid(2, 2):
            with T.block("tile"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi * 4:vi * 4 + 4, vj * 4:vj * 4 + 4])
                T.writes(C[vi * 4:vi * 4 + 4, vj * 4:vj * 4 + 4])
                A0 = T.match_buffer(A[vi * 4:vi * 4 + 4, vj * 4:vj * 4 + 4], (4, 4),
                                    offset_factor=1)
                C0 = T.match_buffer(C[vi * 4:vi * 4 + 4, vj * 4:vj * 4 + 4], (4, 4),
                                    offset_factor=1)
                for ii, jj in T.grid(4, 4):
                    with T.block("inner"):
                        vii, vjj = T.axis.remap("SS", [ii, jj])
                        C0[vii, vjj] = A0[vii, vjj] + T.float32(1)

    a = rng.random((8, 8), "float32")
    np.testing.assert_allclose(_run(_round_trip(tile_copy), a, np.zeros_like(a))[1], a + 1,
                               rtol=1e-6)


def test_symbolic_extent_and_scalar_parameter():
    @T.prim_func
    def shift(a: T.handle, b: T.handle, offset: T.int32):
        n = T.int32()
        A = T.match_buffer(a, (n,), "int32")
        B = T.match_buffer(b, (n,), "int32")
        for i in range(n):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                B[vi] = A[vi] + offset

    _round_trip(shift)
    a = np.arange(7, dtype="int32")
    b = rvm.nd.empty((7,), "int32")
    rvm.build(shift, target="c")["shift"](rvm.nd.array(a), b, 10)
    np.testing.assert_array_equal(b.numpy(), a + 10)


def test_local_scratch_buffer_and_where_predicate():
    @T.prim_func
    def padded_sum(A: T.Buffer((10,), "float32"), B: T.Buffer((1,), "float32")):
        acc = T.alloc_buffer((1,), "float32", scope="local")
        for i0, i1 in T.grid(3, 4):
            with T.block("acc"):
                vk = T.axis.reduce(10, i0 * 4 + i1)
                T.where(i0 * 4 + i1 < 10)
                with T.init():
                    acc[0] = T.float32(0)
                acc[0] = acc[0] + A[vk]
        with T.block("B"):
            B[0] = acc[0]

    a = rng.random(10, "float32")
    np.testing.assert_allclose(_run(_round_trip(padded_sum), a, np.zeros(1, "float32"))[1],
                               [a.sum()], rtol=1e-5)


def test_ir_module_of_prim_funcs_with_private_helper():
    @I.ir_module
    class Module:
        @T.prim_func(private=True)
        def unused_helper(A: T.Buffer((4,), "float32")):
            for i in range(4):
                A[i] = T.float32(0)

        @T.prim_func
        def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
            T.func_attr({"tir.noalias": T.bool(True)})
            for i in range(4):
                with T.block("B"):
                    vi = T.axis.remap("S", [i])
                    B[vi] = T.sqrt(A[vi]) + T.exp(T.float32(0))

    assert "global_symbol" not in Module["unused_helper"].attrs
    a = rng.random(4, "float32")
    np.testing.assert_allclose(_run(_round_trip(Module), a, np.zeros_like(a))[1],
                               np.sqrt(a) + 1, rtol=1e-6)
