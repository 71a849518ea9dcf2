"""RewriteParallelVectorizeUnroll on the default space's sketches: loop kinds from the root's
annotations, numerically the same kernel."""
import collections

import numpy as np
import pytest

import rvm
from rvm import meta_schedule as ms
from rvm.dlight import parallel_threshold
from rvm.meta_schedule.postproc import rewrite_parallel_vectorize_unroll as rpvu
from rvm.meta_schedule.search_strategy.search_strategy import replay, without_decisions
from rvm.script import ir as I, tir as T  # noqa: E741
from rvm.tir.stmt import For, ForKind
from rvm.tir.stmt_functor import post_order_visit
from tests.meta_schedule.workloads import MyModule, with_packed_spaces


@I.ir_module
class MixedIndexTypes:
    """A batch dimension in int64 beside weight dimensions in int32 (as the example's)."""

    @T.prim_func
    def main(X: T.Buffer((T.int64(4), 128), "float32"), W: T.Buffer((10, 128), "float32"),
             Z: T.Buffer((T.int64(4), 10), "float32")):
        for i, j, r in T.grid(T.int64(4), 10, 128):
            with T.block("Z"):
                vi, vj, vr = T.axis.remap("SSR", [i, j, r])
                with T.init():
                    Z[vi, vj] = T.float32(0)
                Z[vi, vj] = Z[vi, vj] + X[vi, vr] * W[vj, vr]


@I.ir_module
class Elementwise:
    @T.prim_func
    def main(A: T.Buffer((2048, 1024), "float32"), B: T.Buffer((2048, 1024), "float32"),
             C: T.Buffer((2048, 1024), "float32")):
        for i, j in T.grid(2048, 1024):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] + B[vi, vj]


def _candidates(mod, count, cores=2):
    ctx = ms.TuneContext(mod, target=f"llvm --num-cores={cores}", rand_state=5,
                         space_generator=with_packed_spaces(f"llvm --num-cores={cores}"))
    out = []
    for space in ctx.generate_design_space():
        for seed in range(count):
            failures = collections.Counter()
            sch = replay(ctx.mod, without_decisions(space.trace), seed + 1,
                         ctx.space_generator.postprocs, failures=failures)
            assert sch is not None, failures
            out.append(sch)
    return out


def _kinds(sch):
    kinds = []
    post_order_visit(sch.mod["main"].body,
                     lambda n: kinds.append(n.kind) if isinstance(n, For) else None)
    return kinds


def _parallel_limit(sch):
    """The parallel extent the candidate's trace sampled (1: one thread)."""
    for inst in sch.trace.insts:
        if inst.kind.name == "Annotate" and inst.attrs[0] == "meta_schedule.parallel":
            return int(sch.get(inst.inputs[-1]))
    raise AssertionError("no parallel annotation in the trace")


@pytest.mark.slow
def test_matmul_candidates_get_parallel_vector_and_unrolled_loops():
    candidates = _candidates(MyModule, 12)
    limits = [_parallel_limit(sch) for sch in candidates]
    assert set(limits) == {1, 32}  # one thread or 16 jobs per core, both drawn
    packed_parallel = []
    for sch, limit in zip(candidates, limits):
        kinds = _kinds(sch)
        assert ForKind.VECTORIZED in kinds
        if "TransformLayout" in [inst.kind.name for inst in sch.trace.insts]:
            # A packed space runs only its outer tile in parallel (the copy into panels
            # sits under it): one thread when that tile is a single iteration.
            assert limit > 1 or ForKind.PARALLEL not in kinds
            packed_parallel.append(ForKind.PARALLEL in kinds)
        else:
            assert (ForKind.PARALLEL in kinds) == (limit > 1)
    assert any(packed_parallel)
    a = np.random.default_rng(0).standard_normal((128, 128)).astype("float32")
    for sch in _candidates(MyModule, 2):
        c = rvm.nd.empty((128, 128), "float32")
        rvm.build(sch.mod, target="c")["main"](rvm.nd.array(a), rvm.nd.array(a), c)
        np.testing.assert_allclose(c.numpy(), a @ a, rtol=1e-4, atol=1e-3)


def test_a_nest_too_small_to_pay_for_threads_stays_serial(monkeypatch):
    # A reduction threads from the default matmul rule's threshold, as its default kernel
    # does: 128^3 = 2^21 multiply-adds is at it, so candidates that sampled a parallel
    # limit run in parallel; one iteration short of the threshold, none does.
    assert parallel_threshold.RULE_MIN_WORK["matmul"] == 128 ** 3
    assert any(ForKind.PARALLEL in _kinds(s) for s in _candidates(MyModule, 4))
    monkeypatch.setitem(parallel_threshold.RULE_MIN_WORK, "matmul", 128 ** 3 + 1)
    assert all(ForKind.PARALLEL not in _kinds(s) for s in _candidates(MyModule, 4))


def test_an_elementwise_nest_keeps_the_general_threshold(monkeypatch):
    # 2^21 additions (one load pair and a store each) do not pay for threads where as many
    # multiply-adds do: the general threshold applies
    assert rpvu.PARALLEL_MIN_WORK > 2048 * 1024
    assert all(ForKind.PARALLEL not in _kinds(s) for s in _candidates(Elementwise, 4))
    monkeypatch.setattr(rpvu, "PARALLEL_MIN_WORK", 2048 * 1024)  # at the threshold: parallel
    assert any(ForKind.PARALLEL in _kinds(s) for s in _candidates(Elementwise, 4))


def test_one_core_targets_get_no_parallel_loop(monkeypatch):
    monkeypatch.setattr(rpvu, "PARALLEL_MIN_WORK", 1)  # (not the reason here)
    assert all(ForKind.PARALLEL not in _kinds(s) for s in _candidates(MyModule, 3, cores=1))


@pytest.mark.parametrize("seed", range(3))
def test_loops_of_mixed_index_types_are_fused_only_where_they_agree(seed):
    (sch,) = _candidates(MixedIndexTypes, 1)
    x = np.random.default_rng(seed).standard_normal((4, 128)).astype("float32")
    w = np.random.default_rng(seed + 1).standard_normal((10, 128)).astype("float32")
    z = rvm.nd.empty((4, 10), "float32")
    rvm.build(sch.mod, target="c")["main"](rvm.nd.array(x), rvm.nd.array(w), z)
    np.testing.assert_allclose(z.numpy(), x @ w.T, rtol=1e-4, atol=1e-4)
