"""Lowering sampled tuning candidates gives the same kernels with the lowering's caches (the
Analyzer's remembered simplifications, region relaxation's shared bounds, the one-walk
unit-loop removal) as without them."""
import sys

import pytest

from rvm.tir import arith
from rvm.tir import op as _op
from rvm.tir.analysis.region import relax_bounds
from rvm.tir.expr import Range
from rvm.tir.transform import simplify as simplify_pass
from rvm.tir.transform.pipeline import lower_module
from rvm.meta_schedule.tune_context import TuneContext
from tests.meta_schedule.workloads import MyModule, MyModuleMixture
from tests.tir.transform.test_simplify_unit_loops import _OneByOne

TARGET = "llvm --num-cores=2"


def _relax_range_apart(rng, ranges, analyzer):
    """relax_range with the bounds of its two indices computed apart (no shared memo)."""
    lo = relax_bounds(rng.min, ranges, analyzer, {})
    hi = relax_bounds(_op.subtract(_op.add(rng.min, rng.extent), 1), ranges, analyzer, {})
    if lo is None or hi is None:
        return None
    start = analyzer.simplify(lo[0])
    extent = analyzer.simplify(_op.add(_op.subtract(hi[1], start), 1))
    return Range.from_min_extent(start, extent)


def _without_caches(monkeypatch):
    monkeypatch.setattr(arith.Analyzer, "_remembered", lambda self, expr, compute: compute(expr))
    plan = sys.modules["rvm.tir.transform.plan_buffer_allocation"]
    monkeypatch.setattr(plan, "relax_range", _relax_range_apart)
    monkeypatch.setattr(simplify_pass, "_UnitLoopRemover", _OneByOne)


def _samples(mod, count, seed):
    context = TuneContext(mod, target=TARGET, rand_state=seed)
    strategy = context.search_strategy
    strategy.pre_tuning(count, count, context.generate_design_space())
    return [sch for sch, _ in strategy.sample_new(count, set(), count * 5)]


@pytest.mark.parametrize("mod, seed", [(MyModule, 3), (MyModuleMixture, 4)],
                         ids=["matmul", "linear-relu"])
def test_sampled_candidates_lower_alike_with_and_without_caches(monkeypatch, mod, seed):
    candidates = _samples(mod, 4, seed)
    assert candidates
    with_caches = [lower_module(sch.mod).script() for sch in candidates]
    _without_caches(monkeypatch)
    without = [lower_module(sch.mod).script() for sch in candidates]
    assert with_caches == without
