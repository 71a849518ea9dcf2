"""MultiLevelTiling's design spaces: a dense layer whose operands are contiguous along the
reduction gets only the rfactor space (vector accumulators in a register tile the reduction
loop runs over); a matmul whose right operand is contiguous along a spatial axis gets the
multi-level tiling space."""
import collections

import numpy as np
import pytest

import rvm
from rvm import meta_schedule as ms
from rvm import te
from rvm.tir.schedule.analysis import const_extent
from rvm.meta_schedule.search_strategy.search_strategy import replay, without_decisions
from rvm.tir.stmt import ForKind
from tests.meta_schedule.workloads import with_packed_spaces


def _dense(m, k, n):
    X, W = te.placeholder((m, k), name="X"), te.placeholder((n, k), name="W")
    r = te.reduce_axis((0, k), name="r")
    Y = te.compute((m, n), lambda i, j: te.sum(X[i, r] * W[j, r], axis=r), name="Y")
    return rvm.IRModule({"main": te.create_prim_func([X, W, Y])})


def _matmul(n):
    A, B = te.placeholder((n, n), name="A"), te.placeholder((n, n), name="B")
    r = te.reduce_axis((0, n), name="r")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    return rvm.IRModule({"main": te.create_prim_func([A, B, C])})


def _candidates(mod, count):
    ctx = ms.TuneContext(mod, target="llvm --num-cores=2", rand_state=3,
                         space_generator=with_packed_spaces("llvm --num-cores=2"))
    spaces = ctx.generate_design_space()
    out = []
    for space in spaces:
        for seed in range(count):
            failures = collections.Counter()
            sch = replay(ctx.mod, without_decisions(space.trace), seed + 1,
                         ctx.space_generator.postprocs, failures=failures)
            assert sch is not None, failures
            out.append(sch)
    return spaces, out


def _kinds(trace):
    return [inst.kind.name for inst in trace.insts]


@pytest.mark.parametrize("m", [1, 12])
def test_dense_gets_only_the_rfactor_space_with_a_register_tile(m):
    spaces, candidates = _candidates(_dense(m, 64, 24), 2)
    assert spaces and all("RFactor" in _kinds(s.trace) for s in spaces)
    rng = np.random.default_rng(m)
    x = rng.standard_normal((m, 64)).astype("float32")
    w = rng.standard_normal((24, 64)).astype("float32")
    for sch in candidates:
        loops = [sch.get(l) for l in sch.get_loops(sch.get_block("Y_rf_update"))]
        lane, cols, rows, reduction = loops[-1], loops[-2], loops[-3], loops[-4]
        assert lane.kind == ForKind.VECTORIZED and const_extent(lane) == 16
        assert const_extent(rows) <= 8 and const_extent(cols) <= 4
        # unrolled whatever the sampled unroll step, so the accumulators can be registers
        assert rows.kind == ForKind.UNROLLED and cols.kind == ForKind.UNROLLED
        assert reduction.loop_var.name.startswith("r")  # the loop around the register tile
        y = rvm.nd.empty((m, 24), "float32")
        rvm.build(sch.mod, target="c")["main"](rvm.nd.array(x), rvm.nd.array(w), y)
        np.testing.assert_allclose(y.numpy(), x @ w.T, rtol=1e-4, atol=1e-4)


@pytest.mark.slow
def test_matmul_gets_the_tiling_space_without_rfactor():
    spaces, candidates = _candidates(_matmul(64), 2)
    assert spaces and not any("RFactor" in _kinds(s.trace) for s in spaces)
    assert all("CacheWrite" in _kinds(s.trace) for s in spaces)
    a = np.random.default_rng(0).standard_normal((64, 64)).astype("float32")
    for sch in candidates:
        c = rvm.nd.empty((64, 64), "float32")
        rvm.build(sch.mod, target="c")["main"](rvm.nd.array(a), rvm.nd.array(a), c)
        np.testing.assert_allclose(c.numpy(), a @ a, rtol=1e-4, atol=1e-3)


def test_matmul_gets_a_space_with_the_right_operand_packed_into_panels():
    spaces, candidates = _candidates(_matmul(64), 3)
    packed = [s for s in spaces if "TransformLayout" in _kinds(s.trace)]
    assert len(packed) == 2 and len(spaces) == 3  # panels of 32 and of 64 lanes
    assert all(_kinds(s.trace).count("CacheRead") == 1 for s in packed)
    a = np.random.default_rng(1).standard_normal((64, 64)).astype("float32")
    b = np.random.default_rng(2).standard_normal((64, 64)).astype("float32")
    seen = 0
    for sch in candidates:
        if "TransformLayout" not in _kinds(sch.trace):
            continue
        seen += 1
        block = sch.get(sch.get_block("C_update"))
        # The register tile reads B from a panel: [j // lanes, r, j % lanes].
        (panel,) = [r.buffer for r in block.reads if r.buffer.name == "B_global"]
        lanes = const_extent(sch.get(sch.get_loops(sch.get_block("C_update"))[-1]))
        assert len(panel.shape) == 3 and int(panel.shape[-1]) == lanes
        copy_loops = [sch.get(l) for l in sch.get_loops(sch.get_block("B_global"))]
        assert copy_loops[-1].kind == ForKind.VECTORIZED and const_extent(copy_loops[-1]) == lanes
        c = rvm.nd.empty((64, 64), "float32")
        rvm.build(sch.mod, target="c")["main"](rvm.nd.array(a), rvm.nd.array(b), c)
        np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-4, atol=1e-3)
    assert seen == 6


def test_a_dense_layer_over_a_transposed_weight_packs_only_the_weight():
    from rvm.meta_schedule.schedule_rule.multi_level_tiling import packable_read

    sch = rvm.tir.Schedule(_matmul(16))
    assert packable_read(sch, sch.get_block("C")) == 1
    # X[i, r] * W[j, r]: no operand is read along j, so nothing to pack.
    sch = rvm.tir.Schedule(_dense(4, 16, 8))
    assert packable_read(sch, sch.get_block("Y")) is None
