"""The generic rule on a libm call or a division over a symbolic innermost axis (softmax's exp
and normalization over the sequence): the axis split into full vectors and a remainder before
scheduling, so the vector loop has no predicate, calls the function's vector form and divides
whole vectors; Before/After in script form and the same results as the unscheduled kernel on
odd shapes."""
import numpy as np
import pytest

from rvm.dlight import CPUInfo, RULES, schedule_func
from rvm.driver.build_module import build
from rvm.ir.base import assert_structural_equal
from rvm.script import tir as T

INFO = CPUInfo(vector_bytes=64, cores=2)


@T.prim_func
def softmax(x: T.handle, y: T.handle):
    n, s = T.int64(), T.int64()
    X = T.match_buffer(x, (n, s), "float32")
    Y = T.match_buffer(y, (n, s), "float32")
    M = T.alloc_buffer((n,), "float32")
    E = T.alloc_buffer((n, s), "float32")
    S = T.alloc_buffer((n,), "float32")
    for i, k in T.grid(n, s):
        with T.block("M"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                M[vi] = T.float32(-3.4e38)
            M[vi] = T.max(M[vi], X[vi, vk])
    for i, j in T.grid(n, s):
        with T.block("E"):
            vi, vj = T.axis.remap("SS", [i, j])
            E[vi, vj] = T.exp(X[vi, vj] - M[vi])
    for i, k in T.grid(n, s):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + E[vi, vk]
    for i, j in T.grid(n, s):
        with T.block("Y"):
            vi, vj = T.axis.remap("SS", [i, j])
            Y[vi, vj] = E[vi, vj] / S[vi]


def test_exp_over_a_symbolic_axis_gets_whole_vectors_and_a_remainder():
    # E and the normalization Y (a division, which a predicated vector loop leaves scalar):
    # s // 64 vectors of 64 lanes per row (no predicate), then the s % 64 last columns one
    # at a time; the reductions as before
    @T.prim_func
    def expected(x: T.handle, y: T.handle):
        T.func_attr({"tir.is_scheduled": "generic"})
        n = T.int64()
        s = T.int64()
        X = T.match_buffer(x, (n, s))
        Y = T.match_buffer(y, (n, s))
        # with T.block("root"):
        M = T.alloc_buffer((n,))
        E = T.alloc_buffer((n, s))
        S = T.alloc_buffer((n,))
        for i, k in T.grid(n, s):
            with T.block("M"):
                vi, vk = T.axis.remap("SR", [i, k])
                T.reads(X[vi, vk])
                T.writes(M[vi])
                with T.init():
                    M[vi] = T.float32(-3.4e+38)
                M[vi] = T.max(M[vi], X[vi, vk])
        for i, j_0 in T.grid(n, s // T.int64(64)):
            for j_1 in T.vectorized(T.int64(64)):
                with T.block("E"):
                    vi = T.axis.spatial(n, i)
                    vj = T.axis.spatial(s, j_0 * T.int64(64) + j_1)
                    T.reads(X[vi, vj], M[vi])
                    T.writes(E[vi, vj])
                    E[vi, vj] = T.exp(X[vi, vj] - M[vi])
        for i_tail in range(n):
            for j_tail in T.serial(s // T.int64(64) * T.int64(64), s):
                with T.block("E_tail"):
                    vi_tail = T.axis.spatial(n, i_tail)
                    vj_tail = T.axis.spatial(s, j_tail)
                    T.reads(X[vi_tail, vj_tail], M[vi_tail])
                    T.writes(E[vi_tail, vj_tail])
                    E[vi_tail, vj_tail] = T.exp(X[vi_tail, vj_tail] - M[vi_tail])
        for i, k in T.grid(n, s):
            with T.block("S"):
                vi, vk = T.axis.remap("SR", [i, k])
                T.reads(E[vi, vk])
                T.writes(S[vi])
                with T.init():
                    S[vi] = T.float32(0.0)
                S[vi] = S[vi] + E[vi, vk]
        for i, j_0 in T.grid(n, s // T.int64(64)):
            for j_1 in T.vectorized(T.int64(64)):
                with T.block("Y"):
                    vi = T.axis.spatial(n, i)
                    vj = T.axis.spatial(s, j_0 * T.int64(64) + j_1)
                    T.reads(E[vi, vj], S[vi])
                    T.writes(Y[vi, vj])
                    Y[vi, vj] = E[vi, vj] / S[vi]
        for i_tail in range(n):
            for j_tail in T.serial(s // T.int64(64) * T.int64(64), s):
                with T.block("Y_tail"):
                    vi_tail = T.axis.spatial(n, i_tail)
                    vj_tail = T.axis.spatial(s, j_tail)
                    T.reads(E[vi_tail, vj_tail], S[vi_tail])
                    T.writes(Y[vi_tail, vj_tail])
                    Y[vi_tail, vj_tail] = E[vi_tail, vj_tail] / S[vi_tail]

    assert_structural_equal(schedule_func(softmax, RULES, INFO),
                            expected.with_attr("global_symbol", "softmax"))


def test_a_constant_axis_is_not_partitioned():
    fixed = softmax.specialize({softmax.buffer_map[softmax.params[0]].shape[1]: 100})
    assert "_tail" not in schedule_func(fixed, RULES, INFO).script()


@pytest.mark.parametrize("n,s", [(1, 1), (3, 7), (2, 63), (1, 64), (3, 65), (2, 130)])
def test_partitioned_softmax_matches_the_unscheduled_kernel(n, s):
    func = softmax.with_attr("global_symbol", "softmax")
    scheduled = schedule_func(func, RULES, INFO)
    assert "E_tail" in scheduled.script() and "Y_tail" in scheduled.script()
    tiled, naive = build(scheduled, "c")["softmax"], build(func, "c")["softmax"]
    x = np.random.default_rng(s).standard_normal((n, s)).astype("float32") * 10
    got, want = np.zeros((n, s), "float32"), np.zeros((n, s), "float32")
    tiled(x, got)
    naive(x, want)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
