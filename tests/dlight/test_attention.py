"""The matmul rule on attention's batched P.V (batch symbolic, the reduction over the
symbolic sequence): full row tiles and a remainder per batch, Before/After in script form;
the same results as the unscheduled kernel on odd shapes."""
import numpy as np
import pytest

from rvm.dlight import CPUInfo, RULES, schedule_func
from rvm.driver.build_module import build
from rvm.ir.base import assert_structural_equal
from rvm.script import tir as T

INFO = CPUInfo(vector_bytes=64, cores=2)


def _pv(d):
    @T.prim_func
    def attention_pv(p: T.handle, v: T.handle, o: T.handle):
        b, s = T.int64(), T.int64()
        P = T.match_buffer(p, (b, s, s), "float32")
        V = T.match_buffer(v, (b, s, T.int64(d)), "float32")
        O = T.match_buffer(o, (b, s, T.int64(d)), "float32")
        for n, i, j, k in T.grid(b, s, T.int64(d), s):
            with T.block("O"):
                vn, vi, vj, vk = T.axis.remap("SSSR", [n, i, j, k])
                with T.init():
                    O[vn, vi, vj] = T.float32(0)
                O[vn, vi, vj] = O[vn, vi, vj] + P[vn, vi, vk] * V[vn, vk, vj]

    return attention_pv


def test_attention_pv_gets_row_tiles_per_batch():
    # b batches of s rows: s // 8 tiles of 8 rows x 16 columns (one vector), the k loop over
    # the symbolic sequence outside the tile, then the remaining rows one at a time; the
    # batches of full tiles in parallel (64 x 64 x 16 x 64 multiply-adds, a symbolic count
    # estimated as 64, reach the matmul's threshold)
    @T.prim_func
    def expected(p: T.handle, v: T.handle, o: T.handle):
        T.func_attr({"tir.is_scheduled": "matmul"})
        b = T.int64()
        s = T.int64()
        P = T.match_buffer(p, (b, s, s))
        V = T.match_buffer(v, (b, s, 16))
        O = T.match_buffer(o, (b, s, 16))
        # with T.block("root"):
        O_global_local = T.alloc_buffer((b, s, 16), scope="local")
        O_global_tail_local = T.alloc_buffer((b, s, 16), scope="local")
        for n in T.parallel(b):
            for j_0, i_0 in T.grid(T.int64(1), s // T.int64(8)):
                for i_1_init in range(T.int64(8)):
                    for j_1_init in T.vectorized(T.int64(16)):
                        with T.block("O_init"):
                            vn = T.axis.spatial(b, n)
                            vi = T.axis.spatial(s, i_0 * T.int64(8) + i_1_init)
                            vj = T.axis.spatial(T.int64(16), j_0 * T.int64(16) + j_1_init)
                            T.reads()
                            T.writes(O_global_local[vn, vi, vj])
                            O_global_local[vn, vi, vj] = T.float32(0.0)
                for k in range(s):
                    for j_1 in T.vectorized(T.int64(16)):
                        for i_1 in T.unroll(T.int64(8)):
                            with T.block("O_update"):
                                vn = T.axis.spatial(b, n)
                                vi = T.axis.spatial(s, i_0 * T.int64(8) + i_1)
                                vj = T.axis.spatial(T.int64(16), j_0 * T.int64(16) + j_1)
                                vk = T.axis.reduce(s, k)
                                T.reads(O_global_local[vn, vi, vj], P[vn, vi, vk], V[vn, vk, vj])
                                T.writes(O_global_local[vn, vi, vj])
                                O_global_local[vn, vi, vj] = O_global_local[vn, vi, vj] + P[vn, vi, vk] * V[vn, vk, vj]
                for ax0 in range(T.int64(8)):
                    for ax1 in T.vectorized(T.int64(16)):
                        with T.block("O_global_local"):
                            v0 = T.axis.spatial(b, n)
                            v1 = T.axis.spatial(s, i_0 * T.int64(8) + ax0)
                            v2 = T.axis.spatial(T.int64(16), j_0 * T.int64(16) + ax1)
                            T.where(n >= T.int64(0) and n < b and i_0 * T.int64(8) + ax0 >= T.int64(0) and i_0 * T.int64(8) + ax0 < s)
                            T.reads(O_global_local[v0, v1, v2])
                            T.writes(O[v0, v1, v2])
                            O[v0, v1, v2] = O_global_local[v0, v1, v2]
        for n_tail, j_tail_0 in T.grid(b, T.int64(1)):
            for i_tail in T.serial(s // T.int64(8) * T.int64(8), s):
                for j_tail_1_init in T.vectorized(T.int64(16)):
                    with T.block("O_tail_init"):
                        vn_tail = T.axis.spatial(b, n_tail)
                        vi_tail = T.axis.spatial(s, i_tail)
                        vj_tail = T.axis.spatial(T.int64(16), j_tail_0 * T.int64(16) + j_tail_1_init)
                        T.reads()
                        T.writes(O_global_tail_local[vn_tail, vi_tail, vj_tail])
                        O_global_tail_local[vn_tail, vi_tail, vj_tail] = T.float32(0.0)
                for k_tail in range(s):
                    for j_tail_1 in T.vectorized(T.int64(16)):
                        with T.block("O_tail_update"):
                            vn_tail = T.axis.spatial(b, n_tail)
                            vi_tail = T.axis.spatial(s, i_tail)
                            vj_tail = T.axis.spatial(T.int64(16), j_tail_0 * T.int64(16) + j_tail_1)
                            vk_tail = T.axis.reduce(s, k_tail)
                            T.reads(O_global_tail_local[vn_tail, vi_tail, vj_tail], P[vn_tail, vi_tail, vk_tail], V[vn_tail, vk_tail, vj_tail])
                            T.writes(O_global_tail_local[vn_tail, vi_tail, vj_tail])
                            O_global_tail_local[vn_tail, vi_tail, vj_tail] = O_global_tail_local[vn_tail, vi_tail, vj_tail] + P[vn_tail, vi_tail, vk_tail] * V[vn_tail, vk_tail, vj_tail]
                for ax0 in T.vectorized(T.int64(16)):
                    with T.block("O_global_tail_local"):
                        v0 = T.axis.spatial(b, n_tail)
                        v1 = T.axis.spatial(s, i_tail)
                        v2 = T.axis.spatial(T.int64(16), j_tail_0 * T.int64(16) + ax0)
                        T.where(n_tail >= T.int64(0) and n_tail < b and i_tail >= T.int64(0) and i_tail < s)
                        T.reads(O_global_tail_local[v0, v1, v2])
                        T.writes(O[v0, v1, v2])
                        O[v0, v1, v2] = O_global_tail_local[v0, v1, v2]

    assert_structural_equal(schedule_func(_pv(16), RULES, INFO),
                            expected.with_attr("global_symbol", "attention_pv"))


@pytest.mark.parametrize("d", [16, 7, 32, 1])
def test_attention_pv_matches_the_unscheduled_kernel(d):
    func = _pv(d).with_attr("global_symbol", "pv")
    scheduled = schedule_func(func, RULES, INFO)
    # one column (a matrix-vector product per batch) is the generic rule's dot product
    assert scheduled.get_attr("tir.is_scheduled") == ("generic" if d == 1 else "matmul")
    tiled, naive = build(scheduled, "c")["pv"], build(func, "c")["pv"]
    rng = np.random.default_rng(d)
    for b, s in ((1, 1), (3, 7), (2, 13), (1, 17)):
        p = rng.standard_normal((b, s, s)).astype("float32")
        v = rng.standard_normal((b, s, d)).astype("float32")
        got, want = np.zeros((b, s, d), "float32"), np.zeros((b, s, d), "float32")
        tiled(p, v, got)
        naive(p, v, want)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(got, p @ v, rtol=1e-4, atol=1e-4)
