"""The attention rule on Q.K^T over a symbolic sequence (BERT's and GPT-2's scores with
their scale, mask add and the causal mask's strided slice): whole panels of columns over a
transposed K and a remainder, Before/After in script form; the same results as the
unscheduled kernel on odd shapes; kernels it leaves to other rules."""
import numpy as np
import pytest

from rvm.dlight import CPUInfo, RULES, schedule_func
from rvm.dlight.cpu.attention import AttentionScores
from rvm.driver.build_module import build
from rvm.ir.base import assert_structural_equal
from rvm.script import tir as T
from rvm.tir.schedule.schedule import Schedule

INFO = CPUInfo(vector_bytes=64, cores=2)


@T.prim_func
def scores(q: T.handle, k: T.handle, m: T.handle, out: T.handle):
    b, s = T.int64(), T.int64()
    Q = T.match_buffer(q, (b, s, T.int64(16)), "float32")
    K = T.match_buffer(k, (b, s, T.int64(16)), "float32")
    M = T.match_buffer(m, (b, s, s), "float32")
    O = T.match_buffer(out, (b, s, s), "float32")
    S = T.alloc_buffer((b, s, s), "float32")
    for n, i, j, r in T.grid(b, s, s, T.int64(16)):
        with T.block("S"):
            vn, vi, vj, vr = T.axis.remap("SSSR", [n, i, j, r])
            with T.init():
                S[vn, vi, vj] = T.float32(0)
            S[vn, vi, vj] = S[vn, vi, vj] + Q[vn, vi, vr] * K[vn, vj, vr]
    for n, i, j in T.grid(b, s, s):
        with T.block("O"):
            vn, vi, vj = T.axis.remap("SSS", [n, i, j])
            O[vn, vi, vj] = S[vn, vi, vj] * T.float32(0.25) + M[vn, vi, vj]


def test_scores_get_panels_over_transposed_keys_and_a_remainder():
    # K copied to K_global[n, r, j] for the whole panels; per panel of 64 columns (4 vectors)
    # and row, 64 accumulators over r, the scale and mask applied at write-back; the last
    # s % 64 columns one dot product each, their epilogue a nest of its own. Serial below
    # the work threshold.
    @T.prim_func
    def expected(q: T.handle, k: T.handle, m: T.handle, out: T.handle):
        T.func_attr({"tir.is_scheduled": "attention"})
        b = T.int64()
        s = T.int64()
        Q = T.match_buffer(q, (b, s, 16))
        K = T.match_buffer(k, (b, s, 16))
        M = T.match_buffer(m, (b, s, s))
        O = T.match_buffer(out, (b, s, s))
        # with T.block("root"):
        S_tail = T.alloc_buffer((b, s, s))
        K_global = T.alloc_buffer((b, 16, s))
        S_local = T.alloc_buffer((b, s, s), scope="local")
        for ax0, ax2, ax1 in T.grid(b, T.int64(16), s // T.int64(64) * T.int64(64)):
            with T.block("K_global"):
                v0 = T.axis.spatial(b, ax0)
                v1 = T.axis.spatial(s, ax1)
                v2 = T.axis.spatial(T.int64(16), ax2)
                T.reads(K[v0, v1, v2])
                T.writes(K_global[v0, v2, v1])
                K_global[v0, v2, v1] = K[v0, v1, v2]
        for n, j_0, j_1_0, i in T.grid(b, s // T.int64(64), T.int64(1), s):
            for j_1_1_init in T.vectorized(T.int64(64)):
                with T.block("S_init"):
                    vn, vi = T.axis.remap("SS", [n, i])
                    vj = T.axis.spatial(s, j_0 * T.int64(64) + j_1_0 * T.int64(64) + j_1_1_init)
                    T.reads()
                    T.writes(S_local[vn, vi, vj])
                    S_local[vn, vi, vj] = T.float32(0.0)
            for r in range(T.int64(16)):
                for j_1_1 in T.vectorized(T.int64(64)):
                    with T.block("S_update"):
                        vn, vi = T.axis.remap("SS", [n, i])
                        vj = T.axis.spatial(s, j_0 * T.int64(64) + j_1_0 * T.int64(64) + j_1_1)
                        vr = T.axis.reduce(T.int64(16), r)
                        T.reads(S_local[vn, vi, vj], Q[vn, vi, vr], K_global[vn, vr, vj])
                        T.writes(S_local[vn, vi, vj])
                        S_local[vn, vi, vj] = S_local[vn, vi, vj] + Q[vn, vi, vr] * K_global[vn, vr, vj]
            for ax0 in T.vectorized(T.int64(64)):
                with T.block("S_local"):
                    v0, v1 = T.axis.remap("SS", [n, i])
                    v2 = T.axis.spatial(s, j_0 * T.int64(64) + j_1_0 * T.int64(64) + ax0)
                    T.where(n >= T.int64(0) and n < b and i >= T.int64(0) and i < s and j_0 * T.int64(64) + j_1_0 * T.int64(64) + ax0 >= T.int64(0) and j_0 * T.int64(64) + j_1_0 * T.int64(64) + ax0 < s)
                    T.reads(S_local[v0, v1, v2], M[v0, v1, v2])
                    T.writes(O[v0, v1, v2])
                    O[v0, v1, v2] = S_local[v0, v1, v2] * T.float32(0.25) + M[v0, v1, v2]
        for n_tail, i_tail in T.grid(b, s):
            for j_tail in T.serial(s // T.int64(64) * T.int64(64), s):
                for r_tail in range(T.int64(16)):
                    with T.block("S_tail"):
                        vn_tail, vi_tail = T.axis.remap("SS", [n_tail, i_tail])
                        vj_tail = T.axis.spatial(s, j_tail)
                        vr_tail = T.axis.reduce(T.int64(16), r_tail)
                        T.reads(Q[vn_tail, vi_tail, vr_tail], K[vn_tail, vj_tail, vr_tail])
                        T.writes(S_tail[vn_tail, vi_tail, vj_tail])
                        with T.init():
                            S_tail[vn_tail, vi_tail, vj_tail] = T.float32(0.0)
                        S_tail[vn_tail, vi_tail, vj_tail] = S_tail[vn_tail, vi_tail, vj_tail] + Q[vn_tail, vi_tail, vr_tail] * K[vn_tail, vj_tail, vr_tail]
        for n_tail, i_tail in T.grid(b, s):
            for j_tail in T.serial(s // T.int64(64) * T.int64(64), s):
                with T.block("O_tail"):
                    vn_tail, vi_tail = T.axis.remap("SS", [n_tail, i_tail])
                    vj_tail = T.axis.spatial(s, j_tail)
                    T.reads(S_tail[vn_tail, vi_tail, vj_tail], M[vn_tail, vi_tail, vj_tail])
                    T.writes(O[vn_tail, vi_tail, vj_tail])
                    O[vn_tail, vi_tail, vj_tail] = S_tail[vn_tail, vi_tail, vj_tail] * T.float32(0.25) + M[vn_tail, vi_tail, vj_tail]

    assert_structural_equal(schedule_func(scores, RULES, INFO),
                            expected.with_attr("global_symbol", "scores"))


def _bert_scores(d, heads):
    @T.prim_func
    def bert_scores(q: T.handle, k: T.handle, m: T.handle, out: T.handle):
        b, s = T.int64(), T.int64()
        Q = T.match_buffer(q, (b, T.int64(heads), s, T.int64(d)), "float32")
        K = T.match_buffer(k, (b, T.int64(heads), s, T.int64(d)), "float32")
        M = T.match_buffer(m, (b, T.int64(1), s, s), "float32")
        O = T.match_buffer(out, (b, T.int64(heads), s, s), "float32")
        S = T.alloc_buffer((b, T.int64(heads), s, s), "float32")
        P = T.alloc_buffer((b, T.int64(heads), s, s), "float32")
        for n, h, i, j, r in T.grid(b, T.int64(heads), s, s, T.int64(d)):
            with T.block("S"):
                vn, vh, vi, vj, vr = T.axis.remap("SSSSR", [n, h, i, j, r])
                with T.init():
                    S[vn, vh, vi, vj] = T.float32(0)
                S[vn, vh, vi, vj] = S[vn, vh, vi, vj] + Q[vn, vh, vi, vr] * K[vn, vh, vj, vr]
        for n, h, i, j in T.grid(b, T.int64(heads), s, s):
            with T.block("P"):
                vn, vh, vi, vj = T.axis.remap("SSSS", [n, h, i, j])
                P[vn, vh, vi, vj] = S[vn, vh, vi, vj] * T.float32(0.125)
        for n, h, i, j in T.grid(b, T.int64(heads), s, s):
            with T.block("O"):
                vn, vh, vi, vj = T.axis.remap("SSSS", [n, h, i, j])
                O[vn, vh, vi, vj] = P[vn, vh, vi, vj] + M[vn, 0, vi, vj]

    return bert_scores


@T.prim_func
def causal_scores(c: T.handle, q: T.handle, k: T.handle, out: T.handle):
    # GPT-2's form: the causal mask is a strided slice of a (s, s + 1) buffer
    b, s = T.int64(), T.int64()
    C = T.match_buffer(c, (b, T.int64(1), s, s + T.int64(1)), "float32")
    Q = T.match_buffer(q, (b, T.int64(2), s, T.int64(8)), "float32")
    K = T.match_buffer(k, (b, T.int64(2), s, T.int64(8)), "float32")
    O = T.match_buffer(out, (b, T.int64(2), s, s), "float32")
    C_slice = T.alloc_buffer((b, T.int64(1), s, s), "float32")
    S = T.alloc_buffer((b, T.int64(2), s, s), "float32")
    for n, h, i, j in T.grid(b, T.int64(1), s, s):
        with T.block("slice"):
            vn, vh, vi, vj = T.axis.remap("SSSS", [n, h, i, j])
            C_slice[vn, vh, vi, vj] = C[vn, vh, vi, vj]
    for n, h, i, j, r in T.grid(b, T.int64(2), s, s, T.int64(8)):
        with T.block("S"):
            vn, vh, vi, vj, vr = T.axis.remap("SSSSR", [n, h, i, j, r])
            with T.init():
                S[vn, vh, vi, vj] = T.float32(0)
            S[vn, vh, vi, vj] = S[vn, vh, vi, vj] + Q[vn, vh, vi, vr] * K[vn, vh, vj, vr]
    for n, h, i, j in T.grid(b, T.int64(2), s, s):
        with T.block("O"):
            vn, vh, vi, vj = T.axis.remap("SSSS", [n, h, i, j])
            O[vn, vh, vi, vj] = S[vn, vh, vi, vj] * T.float32(0.35) + C_slice[vn, 0, vi, vj]


SHAPES = ((1, 1), (3, 7), (2, 63), (1, 64), (2, 67), (1, 131))


def _check(func, arrays, want):
    func = func.with_attr("global_symbol", "f")
    scheduled = schedule_func(func, RULES, INFO)
    assert scheduled.get_attr("tir.is_scheduled") == "attention"
    fast, naive = build(scheduled, "c")["f"], build(func, "c")["f"]
    got, ref = np.zeros_like(want), np.zeros_like(want)
    fast(*arrays, got)
    naive(*arrays, ref)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("b,s", SHAPES)
@pytest.mark.parametrize("d,heads", [(32, 4), (7, 1)])
def test_bert_scores_match_the_unscheduled_kernel(b, s, d, heads):
    rng = np.random.default_rng(s * d)
    q, k = (rng.standard_normal((b, heads, s, d)).astype("float32") for _ in range(2))
    m = np.where(rng.random((b, 1, s, s)) < 0.3, np.float32(-3.4e38), 0).astype("float32")
    want = (q @ k.transpose(0, 1, 3, 2)) * np.float32(0.125) + m
    _check(_bert_scores(d, heads), (q, k, m), want.astype("float32"))


@pytest.mark.parametrize("b,s", SHAPES)
def test_causal_scores_match_the_unscheduled_kernel(b, s):
    rng = np.random.default_rng(s)
    q, k = (rng.standard_normal((b, 2, s, 8)).astype("float32") for _ in range(2))
    c = np.broadcast_to(np.triu(np.full((s, s + 1), -3.4e38, "float32"), 1),
                        (b, 1, s, s + 1)).copy()
    want = (q @ k.transpose(0, 1, 3, 2)) * np.float32(0.35) + c[..., :s]
    _check(causal_scores, (c, q, k), want.astype("float32"))


def test_the_rule_leaves_an_nn_product():
    # K read along the columns (an NN matmul, already contiguous): not attention scores
    assert not AttentionScores().prepare(Schedule(nn_scores), INFO)
    assert schedule_func(nn_scores, RULES, INFO).get_attr("tir.is_scheduled") != "attention"


@pytest.mark.parametrize("s", [7, 24, 64, 100])
def test_constant_columns_match_the_unscheduled_kernel(s):
    # the encoder's 7 tokens: one panel of 7 columns; 100: a panel of 64 and 36 columns left
    fixed = scores.specialize({scores.buffer_map[scores.params[0]].shape[1]: s})
    rng = np.random.default_rng(s)
    q, k = (rng.standard_normal((3, s, 16)).astype("float32") for _ in range(2))
    m = rng.standard_normal((3, s, s)).astype("float32")
    want = (q @ k.transpose(0, 2, 1)) * np.float32(0.25) + m
    _check(fixed, (q, k, m), want.astype("float32"))


@T.prim_func
def nn_scores(q: T.handle, k: T.handle, out: T.handle):
    b, s = T.int64(), T.int64()
    Q = T.match_buffer(q, (b, s, T.int64(16)), "float32")
    K = T.match_buffer(k, (b, T.int64(16), s), "float32")
    O = T.match_buffer(out, (b, s, s), "float32")
    for n, i, j, r in T.grid(b, s, s, T.int64(16)):
        with T.block("O"):
            vn, vi, vj, vr = T.axis.remap("SSSR", [n, i, j, r])
            with T.init():
                O[vn, vi, vj] = T.float32(0)
            O[vn, vi, vj] = O[vn, vi, vj] + Q[vn, vi, vr] * K[vn, vr, vj]


def test_scores_are_the_same_on_one_and_two_threads():
    # BERT's shape counts as parallel work (the batch and heads loops run on threads); each
    # output is summed by one thread in one order, so the thread count changes no bit
    from rvm.runtime.threads import num_threads, set_num_threads

    func = _bert_scores(32, 4).with_attr("global_symbol", "f")
    scheduled = schedule_func(func, RULES, INFO)
    assert "T.parallel" in scheduled.script()
    kernel = build(scheduled, "c")["f"]
    rng = np.random.default_rng(0)
    q, k = (rng.standard_normal((5, 4, 67, 32)).astype("float32") for _ in range(2))
    m = rng.standard_normal((5, 1, 67, 67)).astype("float32")
    before = num_threads()
    outs = []
    try:
        for threads in (1, 2):
            set_num_threads(threads)
            outs.append(np.zeros((5, 4, 67, 67), "float32"))
            kernel(q, k, m, outs[-1])
    finally:
        set_num_threads(before)
    np.testing.assert_array_equal(outs[0], outs[1])
