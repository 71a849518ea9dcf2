"""A candidate threads from the threshold of its kernel's default rule: a conv from the conv
rule's 2^18 multiply-adds, a pool from 2^17, a dense conv the window rule tiles from 2^20,
a matmul from 2^21, a grouped conv, an elementwise nest and a generic reduction from 2^24
(rvm.dlight.parallel_threshold): so a tuned conv or pool threads where its default kernel
does, and a grouped conv stays serial where its default does."""
import collections

import pytest

from rvm import meta_schedule as ms
from rvm.dlight import CPUInfo, RULES, schedule_func
from rvm.dlight.analysis import (
    CONV_PARALLEL_MIN_WORK, GROUPED_PARALLEL_MIN_WORK, MATMUL_PARALLEL_MIN_WORK,
    PARALLEL_MIN_WORK, POOL_PARALLEL_MIN_WORK, WINDOW_PARALLEL_MIN_WORK,
)
from rvm.dlight.parallel_threshold import RULE_MIN_WORK, parallel_min_work, rule_min_work
from rvm.meta_schedule.postproc import RewriteParallelVectorizeUnroll
from rvm.meta_schedule.search_strategy.search_strategy import replay, without_decisions
from rvm.te.create_prim_func import create_prim_func
from rvm.te.operation import compute, placeholder
from rvm.te.operation import reduce_axis, sum as te_sum
from rvm.tir.stmt import Block, For, ForKind
from rvm.tir.stmt_functor import post_order_visit
from tests.dlight.test_conv_channels import _conv_func
from tests.dlight.test_window import _grouped_func, _pool_func, _prime_conv_func

TARGET = "llvm --num-cores=2"
INFO = CPUInfo.from_target(TARGET)


def _matmul(n, m, k):
    a = placeholder((n, k), name="a")
    b = placeholder((k, m), name="b")
    r = reduce_axis((0, k), name="r")
    return create_prim_func([a, b, compute((n, m), lambda i, j: te_sum(a[i, r] * b[r, j],
                                                                       axis=r))])


def _elementwise(rows, cols):
    a = placeholder((rows, cols), name="a")
    return create_prim_func([a, compute((rows, cols), lambda i, j: a[i, j] + 1.0)])


def _row_sum(rows, cols):
    a = placeholder((rows, cols), name="a")
    r = reduce_axis((0, cols), name="r")
    return create_prim_func([a, compute((rows,), lambda i: te_sum(a[i, r], axis=r))])


# name -> (workload, its iterations, the default rule, its threshold)
CASES = {
    "conv": (_conv_func(1, 16, 16, 16), 16 * 16 * 16 * 16 * 9, "conv",
             CONV_PARALLEL_MIN_WORK),
    "conv-below": (_conv_func(1, 8, 16, 8), 8 * 16 * 8 * 8 * 9, "conv",
                   CONV_PARALLEL_MIN_WORK),
    "pool": (_pool_func(1, 8, 128), 8 * 64 * 64 * 4, "window", POOL_PARALLEL_MIN_WORK),
    "pool-below": (_pool_func(1, 8, 126), 8 * 63 * 63 * 4, "window", POOL_PARALLEL_MIN_WORK),
    "window": (_prime_conv_func(1, 26, 17), 26 * 17 * 17 * 16 * 9, "window",
               WINDOW_PARALLEL_MIN_WORK),
    "window-below": (_prime_conv_func(1, 25, 17), 25 * 17 * 17 * 16 * 9, "window",
                     WINDOW_PARALLEL_MIN_WORK),
    "grouped": (_grouped_func(8, 64, 16), 8 * 64 * 16 * 16 * 8 * 9, "window",
                GROUPED_PARALLEL_MIN_WORK),
    "matmul": (_matmul(128, 128, 128), 128 ** 3, "matmul", MATMUL_PARALLEL_MIN_WORK),
    "matmul-below": (_matmul(128, 128, 127), 128 * 128 * 127, "matmul",
                     MATMUL_PARALLEL_MIN_WORK),
    "elementwise": (_elementwise(4096, 4096), 1 << 24, "generic", PARALLEL_MIN_WORK),
    "elementwise-below": (_elementwise(4096, 4095), 4096 * 4095, "generic",
                          PARALLEL_MIN_WORK),
    "row-sum": (_row_sum(2048, 1024), 1 << 21, "generic", PARALLEL_MIN_WORK),
}


def _candidates(func, count=4):
    ctx = ms.TuneContext(func, target=TARGET, rand_state=5)
    out = []
    for space in ctx.generate_design_space():
        for seed in range(count):
            failures = collections.Counter()
            sch = replay(ctx.mod, without_decisions(space.trace), seed + 1,
                         ctx.space_generator.postprocs, failures=failures)
            assert sch is not None, failures
            out.append(sch)
    return ctx, out


def _parallel(sch):
    found = []
    post_order_visit(sch.mod["main"].body, lambda n: found.append(n)
                     if isinstance(n, For) and n.kind == ForKind.PARALLEL else None)
    return bool(found)


def _threads_its_compute(func):
    """Whether a parallel loop of ``func`` holds a block other than a padded input (the
    window rule threads a pad from its own threshold, analysis.PAD_PARALLEL_MIN_WORK)."""
    found = []

    def visit(node):
        if isinstance(node, For) and node.kind == ForKind.PARALLEL:
            names = []
            post_order_visit(node.body, lambda n: names.append(n.name_hint)
                             if isinstance(n, Block) else None)
            found.append(any(name != "PadInput" for name in names))
    post_order_visit(func.body, visit)
    return any(found)


def test_the_thresholds_are_the_rules_classes():
    assert (CONV_PARALLEL_MIN_WORK, POOL_PARALLEL_MIN_WORK, WINDOW_PARALLEL_MIN_WORK,
            MATMUL_PARALLEL_MIN_WORK) == (1 << 18, 1 << 17, 1 << 20, 1 << 21)
    assert GROUPED_PARALLEL_MIN_WORK == PARALLEL_MIN_WORK == 1 << 24
    assert rule_min_work("no-such-rule", None) is None
    assert set(RULE_MIN_WORK) | {"window"} == {rule.name for rule in RULES}


@pytest.mark.parametrize("case", list(CASES))
def test_a_candidate_threads_from_its_default_rules_threshold(case):
    func, work, rule, threshold = CASES[case]
    assert parallel_min_work(func, INFO) == (rule, threshold)
    ctx, candidates = _candidates(func)
    postproc = next(p for p in ctx.space_generator.postprocs
                    if isinstance(p, RewriteParallelVectorizeUnroll))
    assert (postproc.default_rule, postproc.reduction_min_work) == (rule, threshold)
    threads = [_parallel(sch) for sch in candidates]
    # candidates sample one thread or several; those that sample several thread exactly
    # when the work reaches the threshold, as the default kernel does
    assert any(threads) == (work >= threshold)
    default = schedule_func(func, RULES, INFO)
    assert default.get_attr("tir.is_scheduled") == rule
    assert _threads_its_compute(default) == (work >= threshold)


def test_without_a_context_a_reduction_keeps_the_matmul_threshold():
    postproc = RewriteParallelVectorizeUnroll()
    assert postproc.default_rule is None
    assert postproc.reduction_min_work == MATMUL_PARALLEL_MIN_WORK
