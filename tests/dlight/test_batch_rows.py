"""The matmul rule on a batched linear layer ([b, n, k] x [k, cols], b and n symbolic: BERT's
linears): row tiles per batch, with the batches and column panels fused into the parallel
loop, so a batch of one still runs on every core. Before/After in script form; the same
results as the unscheduled kernel on odd shapes; the generated C guards no access."""
import re

import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.dlight import CPUInfo, RULES, schedule_func
from rvm.ir.base import assert_structural_equal
from rvm.script import tir as T

INFO = CPUInfo(vector_bytes=64, cores=2)
RNG = np.random.default_rng(26)


@T.prim_func
def batch_dense_relu(x: T.handle, W: T.Buffer((T.int64(64), T.int64(128)), "float32"),
                     B: T.Buffer((T.int64(128),), "float32"), z: T.handle):
    b, n = T.int64(), T.int64()
    X = T.match_buffer(x, (b, n, T.int64(64)), "float32")
    Z = T.match_buffer(z, (b, n, T.int64(128)), "float32")
    Y = T.alloc_buffer((b, n, T.int64(128)), "float32")
    for bb, i, j, k in T.grid(b, n, T.int64(128), T.int64(64)):
        with T.block("Y"):
            vb, vi, vj, vk = T.axis.remap("SSSR", [bb, i, j, k])
            with T.init():
                Y[vb, vi, vj] = T.float32(0)
            Y[vb, vi, vj] = Y[vb, vi, vj] + X[vb, vi, vk] * W[vk, vj]
    for bb, i, j in T.grid(b, n, T.int64(128)):
        with T.block("Z"):
            vb, vi, vj = T.axis.remap("SSS", [bb, i, j])
            Z[vb, vi, vj] = T.max(Y[vb, vi, vj] + B[vj], T.float32(0))


def test_batches_and_column_panels_share_the_parallel_loop():
    # b batches of n rows: per batch, n // 6 tiles of 6 rows x 64 columns (4 registers)
    # and the remaining rows one at a time; the parallel loop runs over the batches and the
    # two column panels fused (b * 2 iterations, divided by the constant 2), so at batch 1
    # both cores take a panel; over the batches alone (before) one core did all the work
    @T.prim_func
    def expected(x: T.handle, W: T.Buffer((T.int64(64), T.int64(128)), "float32"),
                 B: T.Buffer((T.int64(128),), "float32"), z: T.handle):
        T.func_attr({"tir.is_scheduled": "matmul"})
        b = T.int64()
        n = T.int64()
        X = T.match_buffer(x, (b, n, 64))
        Z = T.match_buffer(z, (b, n, 128))
        # with T.block("root"):
        Y_local = T.alloc_buffer((b, n, 128), scope="local")
        Y_tail_local = T.alloc_buffer((b, n, 128), scope="local")
        for bb_j_0_fused in T.parallel(b * T.int64(2)):
            for i_0 in range(n // T.int64(6)):
                for i_1_init in range(T.int64(6)):
                    for j_1_init in T.vectorized(T.int64(64)):
                        with T.block("Y_init"):
                            vb = T.axis.spatial(b, bb_j_0_fused // T.int64(2))
                            vi = T.axis.spatial(n, i_0 * T.int64(6) + i_1_init)
                            vj = T.axis.spatial(T.int64(128), bb_j_0_fused % T.int64(2)
                                                * T.int64(64) + j_1_init)
                            T.reads()
                            T.writes(Y_local[vb, vi, vj])
                            Y_local[vb, vi, vj] = T.float32(0.0)
                for k in range(T.int64(64)):
                    for j_1 in T.vectorized(T.int64(64)):
                        for i_1 in T.unroll(T.int64(6)):
                            with T.block("Y_update"):
                                vb = T.axis.spatial(b, bb_j_0_fused // T.int64(2))
                                vi = T.axis.spatial(n, i_0 * T.int64(6) + i_1)
                                vj = T.axis.spatial(T.int64(128), bb_j_0_fused % T.int64(2)
                                                    * T.int64(64) + j_1)
                                vk = T.axis.reduce(T.int64(64), k)
                                T.reads(Y_local[vb, vi, vj], X[vb, vi, vk], W[vk, vj])
                                T.writes(Y_local[vb, vi, vj])
                                Y_local[vb, vi, vj] = Y_local[vb, vi, vj] \
                                    + X[vb, vi, vk] * W[vk, vj]
                for ax0 in range(T.int64(6)):
                    for ax1 in T.vectorized(T.int64(64)):
                        with T.block("Y_local"):
                            v0 = T.axis.spatial(b, bb_j_0_fused // T.int64(2))
                            v1 = T.axis.spatial(n, i_0 * T.int64(6) + ax0)
                            v2 = T.axis.spatial(T.int64(128), bb_j_0_fused % T.int64(2)
                                                * T.int64(64) + ax1)
                            T.where(bb_j_0_fused // T.int64(2) >= T.int64(0)
                                    and bb_j_0_fused // T.int64(2) < b
                                    and i_0 * T.int64(6) + ax0 >= T.int64(0)
                                    and i_0 * T.int64(6) + ax0 < n)
                            T.reads(Y_local[v0, v1, v2], B[v2])
                            T.writes(Z[v0, v1, v2])
                            Z[v0, v1, v2] = T.max(Y_local[v0, v1, v2] + B[v2], T.float32(0.0))
        for bb_tail, j_tail_0 in T.grid(b, T.int64(2)):
            for i_tail in T.serial(n // T.int64(6) * T.int64(6), n):
                for j_tail_1_init in T.vectorized(T.int64(64)):
                    with T.block("Y_tail_init"):
                        vb_tail = T.axis.spatial(b, bb_tail)
                        vi_tail = T.axis.spatial(n, i_tail)
                        vj_tail = T.axis.spatial(T.int64(128),
                                                 j_tail_0 * T.int64(64) + j_tail_1_init)
                        T.reads()
                        T.writes(Y_tail_local[vb_tail, vi_tail, vj_tail])
                        Y_tail_local[vb_tail, vi_tail, vj_tail] = T.float32(0.0)
                for k_tail in range(T.int64(64)):
                    for j_tail_1 in T.vectorized(T.int64(64)):
                        with T.block("Y_tail_update"):
                            vb_tail = T.axis.spatial(b, bb_tail)
                            vi_tail = T.axis.spatial(n, i_tail)
                            vj_tail = T.axis.spatial(T.int64(128),
                                                     j_tail_0 * T.int64(64) + j_tail_1)
                            vk_tail = T.axis.reduce(T.int64(64), k_tail)
                            T.reads(Y_tail_local[vb_tail, vi_tail, vj_tail],
                                    X[vb_tail, vi_tail, vk_tail], W[vk_tail, vj_tail])
                            T.writes(Y_tail_local[vb_tail, vi_tail, vj_tail])
                            Y_tail_local[vb_tail, vi_tail, vj_tail] = \
                                Y_tail_local[vb_tail, vi_tail, vj_tail] \
                                + X[vb_tail, vi_tail, vk_tail] * W[vk_tail, vj_tail]
                for ax0 in T.vectorized(T.int64(64)):
                    with T.block("Y_tail_local"):
                        v0 = T.axis.spatial(b, bb_tail)
                        v1 = T.axis.spatial(n, i_tail)
                        v2 = T.axis.spatial(T.int64(128), j_tail_0 * T.int64(64) + ax0)
                        T.where(bb_tail >= T.int64(0) and bb_tail < b
                                and i_tail >= T.int64(0) and i_tail < n)
                        T.reads(Y_tail_local[v0, v1, v2], B[v2])
                        T.writes(Z[v0, v1, v2])
                        Z[v0, v1, v2] = T.max(Y_tail_local[v0, v1, v2] + B[v2], T.float32(0.0))

    assert_structural_equal(schedule_func(batch_dense_relu, RULES, INFO),
                            expected.with_attr("global_symbol", "batch_dense_relu"))


def _batched_linear(k, cols, weight):
    """x (b, n, k) @ w + bias with b and n symbolic. ``weight``: "NT" a constant (cols, k)
    weight used transposed (a linear layer's, packed at build), "NN" a run-time (k, cols)
    operand."""
    from rvm.relax.block_builder import BlockBuilder
    from rvm.relax.expr import Var
    from rvm.relax.struct_info import TensorStructInfo

    op = relax.op
    b, n = rvm.tir.Var("b", "int64"), rvm.tir.Var("n", "int64")
    params = [Var("x", TensorStructInfo((b, n, k), "float32"))]
    if weight == "NN":
        params.append(Var("w", TensorStructInfo((k, cols), "float32")))
    bias = relax.const(RNG.standard_normal((cols,)).astype("float32"))
    bb = BlockBuilder()
    with bb.function("main", params):
        with bb.dataflow():
            if weight == "NN":
                w = params[1]
            else:
                w = op.permute_dims(relax.const(RNG.standard_normal((cols, k))
                                                .astype("float32")))
            out = bb.emit_output(bb.emit(op.add(op.matmul(params[0], w), bias)))
        bb.emit_func_output(out)
    return bb.get()


@pytest.mark.parametrize("weight,k,cols", [("NT", 128, 128), ("NN", 37, 80)])
def test_batched_linear_matches_the_unscheduled_kernel(weight, k, cols):
    # batches of 1, 2 and 3; rows 1 (no full tile), 7 and 13 (tiles and a remainder), 64
    from rvm.driver.relax_build import lower

    mod = _batched_linear(k, cols, weight)
    kernels = [f for gv, f in lower(mod).functions.items()
               if isinstance(f, rvm.tir.PrimFunc) and not gv.name_hint.startswith("shape_func")]
    assert [f.get_attr("tir.is_scheduled") for f in kernels] == ["matmul"]
    ex = relax.build(mod)
    source = ex.kernel_libs[0].source
    assert "omp parallel" in source
    assert "rvm_oob_hit(&" not in source  # every access proven in bounds
    tiled = relax.VirtualMachine(ex, rvm.cpu())["main"]
    naive = relax.VirtualMachine(relax.build(mod, default_schedule=False), rvm.cpu())["main"]
    w = RNG.standard_normal((k, cols)).astype("float32")
    for batch, rows in ((1, 64), (1, 1), (2, 7), (3, 13)):
        args = [RNG.standard_normal((batch, rows, k)).astype("float32")]
        args += [w] if weight == "NN" else []
        np.testing.assert_allclose(tiled(*args).numpy(), naive(*args).numpy(), rtol=1e-4,
                                   atol=1e-4, err_msg=f"batch {batch}, {rows} rows")


def test_a_batch_of_one_runs_column_panels_on_two_threads():
    # The C of the batched linear: the parallel region's iterations are the batches times
    # the panels, so one batch of 128 columns (two 64-wide panels) is two of them
    mod = _batched_linear(128, 128, "NT")
    source = relax.build(mod).kernel_libs[0].source
    bounds = [line for line in source.splitlines()
              if "rvm_hi_" in line and "const int64_t" in line]
    assert len(bounds) == 1, bounds
    assert re.search(r"rvm_hi_\w+ = \(int64_t\)\(\(b \* INT64_C\(2\)\)\);", bounds[0]), bounds
