"""The matmul rule on a symbolic row count: full register tiles and one remainder
(Schedule.partition_rows), Before/After in script form; the same results as the unscheduled kernel
on odd shapes; the generated C keeps its accumulators on the stack and guards nothing."""
import re

import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.dlight import CPUInfo, RULES, schedule_func
from rvm.ir.base import assert_structural_equal
from rvm.script import tir as T

INFO = CPUInfo(vector_bytes=64, cores=2)


@T.prim_func
def dense_relu(x: T.handle, W: T.Buffer((T.int64(64), T.int64(128)), "float32"),
               B: T.Buffer((T.int64(128),), "float32"), z: T.handle):
    n = T.int64()
    X = T.match_buffer(x, (n, T.int64(64)), "float32")
    Z = T.match_buffer(z, (n, T.int64(128)), "float32")
    Y = T.alloc_buffer((n, T.int64(128)), "float32")
    for i, j, k in T.grid(n, T.int64(128), T.int64(64)):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vk, vj]
    for i, j in T.grid(n, T.int64(128)):
        with T.block("Z"):
            vi, vj = T.axis.remap("SS", [i, j])
            Z[vi, vj] = T.max(Y[vi, vj] + B[vj], T.float32(0))


def test_a_symbolic_row_count_gets_full_tiles_and_a_remainder():
    # n rows: n // 6 tiles of 6 rows x 4 registers (24 accumulators, rows unrolled, no
    # predicate inside the k loop), then the n - n // 6 * 6 remaining rows one at a time;
    # each part accumulates into its own buffer, a tile of which lives across k; bias and
    # ReLU as each tile is written back
    @T.prim_func
    def expected(x: T.handle, W: T.Buffer((T.int64(64), T.int64(128)), "float32"),
                 B: T.Buffer((T.int64(128),), "float32"), z: T.handle):
        T.func_attr({"tir.is_scheduled": "matmul"})
        n = T.int64()
        X = T.match_buffer(x, (n, 64))
        Z = T.match_buffer(z, (n, 128))
        # with T.block("root"):
        Y_local = T.alloc_buffer((n, 128), scope="local")
        Y_tail_local = T.alloc_buffer((n, 128), scope="local")
        for j_0, i_0 in T.grid(T.int64(2), n // T.int64(6)):
            for i_1_init in range(T.int64(6)):
                for j_1_init in T.vectorized(T.int64(64)):
                    with T.block("Y_init"):
                        vi = T.axis.spatial(n, i_0 * T.int64(6) + i_1_init)
                        vj = T.axis.spatial(T.int64(128), j_0 * T.int64(64) + j_1_init)
                        T.reads()
                        T.writes(Y_local[vi, vj])
                        Y_local[vi, vj] = T.float32(0.0)
            for k in range(T.int64(64)):
                for j_1 in T.vectorized(T.int64(64)):
                    for i_1 in T.unroll(T.int64(6)):
                        with T.block("Y"):
                            vi = T.axis.spatial(n, i_0 * T.int64(6) + i_1)
                            vj = T.axis.spatial(T.int64(128), j_0 * T.int64(64) + j_1)
                            vk = T.axis.reduce(T.int64(64), k)
                            T.reads(Y_local[vi, vj], X[vi, vk], W[vk, vj])
                            T.writes(Y_local[vi, vj])
                            Y_local[vi, vj] = Y_local[vi, vj] + X[vi, vk] * W[vk, vj]
            for ax0 in range(T.int64(6)):
                for ax1 in T.vectorized(T.int64(64)):
                    with T.block("Y_local"):
                        v0 = T.axis.spatial(n, i_0 * T.int64(6) + ax0)
                        v1 = T.axis.spatial(T.int64(128), j_0 * T.int64(64) + ax1)
                        T.where(i_0 * T.int64(6) + ax0 >= T.int64(0)
                            and i_0 * T.int64(6) + ax0 < n)
                        T.reads(Y_local[v0, v1], B[v1])
                        T.writes(Z[v0, v1])
                        Z[v0, v1] = T.max(Y_local[v0, v1] + B[v1], T.float32(0.0))
        for j_tail_0 in range(T.int64(2)):
            for i_tail in T.serial(n // T.int64(6) * T.int64(6), n):
                for j_tail_1_init in T.vectorized(T.int64(64)):
                    with T.block("Y_tail_init"):
                        vi_tail = T.axis.spatial(n, i_tail)
                        vj_tail = T.axis.spatial(T.int64(128),
                                                 j_tail_0 * T.int64(64) + j_tail_1_init)
                        T.reads()
                        T.writes(Y_tail_local[vi_tail, vj_tail])
                        Y_tail_local[vi_tail, vj_tail] = T.float32(0.0)
                for k_tail in range(T.int64(64)):
                    for j_tail_1 in T.vectorized(T.int64(64)):
                        with T.block("Y_tail"):
                            vi_tail = T.axis.spatial(n, i_tail)
                            vj_tail = T.axis.spatial(T.int64(128),
                                                 j_tail_0 * T.int64(64) + j_tail_1)
                            vk_tail = T.axis.reduce(T.int64(64), k_tail)
                            T.reads(Y_tail_local[vi_tail, vj_tail], X[vi_tail, vk_tail],
                                W[vk_tail, vj_tail])
                            T.writes(Y_tail_local[vi_tail, vj_tail])
                            Y_tail_local[vi_tail, vj_tail] = Y_tail_local[vi_tail, vj_tail] \
                            + X[vi_tail, vk_tail] * W[vk_tail, vj_tail]
                for ax0 in T.vectorized(T.int64(64)):
                    with T.block("Y_tail_local"):
                        v0 = T.axis.spatial(n, i_tail)
                        v1 = T.axis.spatial(T.int64(128), j_tail_0 * T.int64(64) + ax0)
                        T.where(i_tail >= T.int64(0) and i_tail < n)
                        T.reads(Y_tail_local[v0, v1], B[v1])
                        T.writes(Z[v0, v1])
                        Z[v0, v1] = T.max(Y_tail_local[v0, v1] + B[v1], T.float32(0.0))

    assert_structural_equal(schedule_func(dense_relu, RULES, INFO),
                            expected.with_attr("global_symbol", "dense_relu"))


def _symbolic_matmul(k, cols, epilogue=True, constant=None):
    """x (n, k) @ w (k, cols) [+ b, relu]; ``constant``: w bound as a constant (NT when
    "T": x @ w.T of a (cols, k) weight, a linear layer's)."""
    from rvm.relax.block_builder import BlockBuilder
    from rvm.relax.expr import Var
    from rvm.relax.struct_info import TensorStructInfo

    op = relax.op
    n = rvm.tir.Var("n", "int64")
    params = [Var("x", TensorStructInfo((n, k), "float32"))]
    if constant is None:
        params.append(Var("w", TensorStructInfo((k, cols), "float32")))
    if epilogue:
        params.append(Var("b", TensorStructInfo((cols,), "float32")))
    bb = BlockBuilder()
    with bb.function("main", params):
        with bb.dataflow():
            if constant is None:
                w = params[1]
            elif isinstance(constant, tuple):
                w = op.permute_dims(relax.const(constant[1]))
            else:
                w = relax.const(constant)
            y = op.matmul(params[0], w)
            if epilogue:
                y = op.nn.relu(op.add(y, params[-1]))
            out = bb.emit_output(bb.emit(y))
        bb.emit_func_output(out)
    return bb.get()


RNG = np.random.default_rng(26)
# (name, k, cols, epilogue, constant weight): reductions and widths no vector divides, a
# predicated last column panel (131), one narrow masked tile (10), bound weights packed
# at build (NN, and NT: a linear layer's weight)
SHAPES = [
    ("dense_relu", 37, 48, True, None),
    ("wide_predicated", 29, 131, True, None),
    ("narrow", 19, 10, False, None),
    ("bound_nn", 21, 96, True, RNG.standard_normal((21, 96)).astype("float32")),
    ("bound_nt", 33, 64, False, ("T", RNG.standard_normal((64, 33)).astype("float32"))),
]


@pytest.mark.parametrize("name,k,cols,epilogue,constant", SHAPES, ids=[s[0] for s in SHAPES])
def test_row_tiles_match_the_unscheduled_kernel_at_any_row_count(name, k, cols, epilogue,
                                                                  constant):
    mod = _symbolic_matmul(k, cols, epilogue, constant)
    from rvm.driver.relax_build import lower

    kernels = [f for gv, f in lower(mod).functions.items()
               if isinstance(f, rvm.tir.PrimFunc) and not gv.name_hint.startswith("shape_func")]
    assert [f.get_attr("tir.is_scheduled") for f in kernels] == ["matmul"]
    assert "_tail" in kernels[0].script()  # partitioned: full tiles and a remainder
    tiled = relax.VirtualMachine(relax.build(mod), rvm.cpu())["main"]
    naive = relax.VirtualMachine(relax.build(mod, default_schedule=False), rvm.cpu())["main"]
    for rows in (1, 7, 450):
        args = [RNG.standard_normal((rows, k)).astype("float32")]
        if constant is None:
            args.append(RNG.standard_normal((k, cols)).astype("float32"))
        if epilogue:
            args.append(RNG.standard_normal((cols,)).astype("float32"))
        np.testing.assert_allclose(tiled(*args).numpy(), naive(*args).numpy(), rtol=1e-4,
                                   atol=1e-4, err_msg=f"{rows} rows")


def _kernel_source(source, name):
    start = source.index(f"RVM_EXPORT int rvm_kernel_{name}(")
    end = source.find("RVM_EXPORT", start + 1)
    return source[start:end if end >= 0 else len(source)]


def test_row_tiles_keep_accumulators_on_the_stack_and_guard_no_access():
    # The tile's accumulator is a fixed-size C array (no workspace allocation per call or
    # per tile), and the bounds prover proves every access of both parts (a division by
    # the tile's rows in the loop bounds), so none is guarded.
    mod = _symbolic_matmul(64, 128)
    ex = relax.build(mod)
    source = ex.kernel_libs[0].source
    [name] = [f for f in re.findall(r"RVM_EXPORT int rvm_kernel_(\w+)\(", source)
              if not f.startswith("shape_func")]
    kernel = _kernel_source(source, name)
    assert re.search(r"float \w+_local\[384\]", kernel)  # 6 rows x 64 columns
    assert re.search(r"float \w+_tail_local\[64\]", kernel)  # one row
    assert "RVMBackendAllocWorkspace" not in kernel
    assert "rvm_oob_hit(&" not in kernel
    x, w, b = (RNG.standard_normal(s).astype("float32") for s in ((13, 64), (64, 128), (128,)))
    got = relax.VirtualMachine(ex, rvm.cpu())["main"](x, w, b).numpy()
    np.testing.assert_allclose(got, np.maximum(x @ w + b, 0), rtol=1e-4, atol=1e-4)


def test_a_large_symbolic_row_count_runs_row_tiles_in_parallel():
    # 512 x 512 per row (a GPT-2 MLP layer's shape class): the row-tile loop is the parallel
    # one, outside the column panels, with the accumulator per (row tile, panel); before,
    # reordering the two after the tile was built was refused and the kernel fell to the
    # generic rule
    from rvm.driver.relax_build import lower

    mod = _symbolic_matmul(512, 512, constant=RNG.standard_normal((512, 512)).astype("float32"))
    kernels = [f for gv, f in lower(mod).functions.items()
               if isinstance(f, rvm.tir.PrimFunc) and not gv.name_hint.startswith("shape_func")]
    assert [f.get_attr("tir.is_scheduled") for f in kernels] == ["matmul"]
    ex = relax.build(mod)
    assert "omp parallel" in ex.kernel_libs[0].source
    tiled = relax.VirtualMachine(ex, rvm.cpu())["main"]
    naive = relax.VirtualMachine(relax.build(mod, default_schedule=False), rvm.cpu())["main"]
    for rows in (1, 7, 37):
        args = [RNG.standard_normal((rows, 512)).astype("float32"),
                RNG.standard_normal((512,)).astype("float32")]
        np.testing.assert_allclose(tiled(*args).numpy(), naive(*args).numpy(), rtol=1e-4,
                                   atol=1e-3)


@T.prim_func
def flat_dense(x: T.handle, W: T.Buffer((T.int64(64), T.int64(64)), "float32"),
               B: T.Buffer((T.int64(64),), "float32"), z: T.handle, b: T.int64, l: T.int64):
    X = T.match_buffer(x, (b * l, T.int64(64)), "float32")
    Z = T.match_buffer(z, (b * l, T.int64(64)), "float32")
    Y = T.alloc_buffer((b * l, T.int64(64)), "float32")
    for i, j, k in T.grid(b * l, T.int64(64), T.int64(64)):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vk, vj]
    for i, j in T.grid(b * l, T.int64(64)):
        with T.block("Z"):
            vi, vj = T.axis.remap("SS", [i, j])
            Z[vi, vj] = Y[vi, vj] + B[vj]


def test_flattened_rows_count_as_both_their_symbols():
    # Rows b * l (GPT-2's Conv1D: a batch and a sequence flattened by a reshape) are
    # estimated as 64 x 64 rows, as the two loops b, l of the same rows unflattened are:
    # 4096 x 64 x 64 multiply-adds reach the parallel threshold, so the row tiles run in
    # parallel (as one symbolic loop, 64 rows, they stayed serial, on one of two cores)
    @T.prim_func
    def expected(x: T.handle, W: T.Buffer((T.int64(64), T.int64(64)), "float32"),
                 B: T.Buffer((T.int64(64),), "float32"), z: T.handle, b: T.int64,
                 l: T.int64):
        T.func_attr({"tir.is_scheduled": "matmul"})
        X = T.match_buffer(x, (b * l, 64))
        Z = T.match_buffer(z, (b * l, 64))
        Y_local = T.alloc_buffer((b * l, 64), scope="local")
        Y_tail_local = T.alloc_buffer((b * l, 64), scope="local")
        for i_0 in T.parallel(b * l // T.int64(6)):
            for j_0 in range(T.int64(1)):
                for i_1_init in range(T.int64(6)):
                    for j_1_init in T.vectorized(T.int64(64)):
                        with T.block("Y_init"):
                            vi = T.axis.spatial(b * l, i_0 * T.int64(6) + i_1_init)
                            vj = T.axis.spatial(T.int64(64), j_0 * T.int64(64) + j_1_init)
                            T.reads()
                            T.writes(Y_local[vi, vj])
                            Y_local[vi, vj] = T.float32(0.0)
                for k in range(T.int64(64)):
                    for j_1 in T.vectorized(T.int64(64)):
                        for i_1 in T.unroll(T.int64(6)):
                            with T.block("Y_update"):
                                vi = T.axis.spatial(b * l, i_0 * T.int64(6) + i_1)
                                vj = T.axis.spatial(T.int64(64), j_0 * T.int64(64) + j_1)
                                vk = T.axis.reduce(T.int64(64), k)
                                T.reads(Y_local[vi, vj], X[vi, vk], W[vk, vj])
                                T.writes(Y_local[vi, vj])
                                Y_local[vi, vj] = Y_local[vi, vj] + X[vi, vk] * W[vk, vj]
                for ax0 in range(T.int64(6)):
                    for ax1 in T.vectorized(T.int64(64)):
                        with T.block("Y_local"):
                            v0 = T.axis.spatial(b * l, i_0 * T.int64(6) + ax0)
                            v1 = T.axis.spatial(T.int64(64), j_0 * T.int64(64) + ax1)
                            T.where(i_0 * T.int64(6) + ax0 >= T.int64(0)
                                    and i_0 * T.int64(6) + ax0 < b * l)
                            T.reads(Y_local[v0, v1], B[v1])
                            T.writes(Z[v0, v1])
                            Z[v0, v1] = Y_local[v0, v1] + B[v1]
        for j_tail_0 in range(T.int64(1)):
            for i_tail in T.serial(b * l // T.int64(6) * T.int64(6), b * l):
                for j_tail_1_init in T.vectorized(T.int64(64)):
                    with T.block("Y_tail_init"):
                        vi_tail = T.axis.spatial(b * l, i_tail)
                        vj_tail = T.axis.spatial(T.int64(64),
                                                 j_tail_0 * T.int64(64) + j_tail_1_init)
                        T.reads()
                        T.writes(Y_tail_local[vi_tail, vj_tail])
                        Y_tail_local[vi_tail, vj_tail] = T.float32(0.0)
                for k_tail in range(T.int64(64)):
                    for j_tail_1 in T.vectorized(T.int64(64)):
                        with T.block("Y_tail_update"):
                            vi_tail = T.axis.spatial(b * l, i_tail)
                            vj_tail = T.axis.spatial(T.int64(64),
                                                     j_tail_0 * T.int64(64) + j_tail_1)
                            vk_tail = T.axis.reduce(T.int64(64), k_tail)
                            T.reads(Y_tail_local[vi_tail, vj_tail], X[vi_tail, vk_tail],
                                    W[vk_tail, vj_tail])
                            T.writes(Y_tail_local[vi_tail, vj_tail])
                            Y_tail_local[vi_tail, vj_tail] = Y_tail_local[vi_tail, vj_tail] \
                                + X[vi_tail, vk_tail] * W[vk_tail, vj_tail]
                for ax0 in T.vectorized(T.int64(64)):
                    with T.block("Y_tail_local"):
                        v0 = T.axis.spatial(b * l, i_tail)
                        v1 = T.axis.spatial(T.int64(64), j_tail_0 * T.int64(64) + ax0)
                        T.where(i_tail >= T.int64(0) and i_tail < b * l)
                        T.reads(Y_tail_local[v0, v1], B[v1])
                        T.writes(Z[v0, v1])
                        Z[v0, v1] = Y_tail_local[v0, v1] + B[v1]

    assert_structural_equal(schedule_func(flat_dense, RULES, INFO),
                            expected.with_attr("global_symbol", "flat_dense"))
    # the same rows as one symbolic loop: 64 x 64 x 64, serial
    serial = schedule_func(dense_relu, RULES, INFO).script()
    assert "T.parallel" not in serial


def _flattened_matmul(k, cols, weight):
    """x (b, l, k) reshaped to (b * l, k) @ a bound weight + bias: GPT-2's Conv1D (``weight``
    (k, cols)) or a linear layer (``("T", w)``, w (cols, k))."""
    from rvm.relax.block_builder import BlockBuilder
    from rvm.relax.expr import Var
    from rvm.relax.struct_info import TensorStructInfo

    op = relax.op
    b, l = rvm.tir.Var("b", "int64"), rvm.tir.Var("l", "int64")
    x = Var("x", TensorStructInfo((b, l, k), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            w = op.permute_dims(relax.const(weight[1])) if isinstance(weight, tuple) \
                else relax.const(weight)
            flat = bb.emit(op.reshape(x, (b * l, k)))
            y = op.add(op.matmul(flat, w), relax.const(RNG.standard_normal(cols).astype("float32")))
            out = bb.emit_output(bb.emit(y))
        bb.emit_func_output(out)
    return bb.get()


@pytest.mark.parametrize("layout", ["nn", "nt"])
def test_flattened_rows_match_the_unscheduled_kernel(layout):
    # 23 x 96 (a reduction no vector divides); rows b * l of 1, a remainder only (3 x 7 =
    # 21: 3 tiles and 3 rows) and 2 x 37. The kernel's entry checks that b * l and the
    # offsets of the bounds proofs do not overflow, each marked unlikely: unmarked, gcc's
    # guess that each may fail made the tile's loop nest cold, compiled without unrolling
    # the register tile (its accumulators in memory, 2.5x slower); twice the tensor checks
    # of this kernel did the same, which the cold error function prevents
    weight = RNG.standard_normal((23, 96)).astype("float32")
    mod = _flattened_matmul(23, 96, weight if layout == "nn" else ("T", weight.T.copy()))
    ex = relax.build(mod)
    source = ex.kernel_libs[0].source
    [name] = [f for f in re.findall(r"RVM_EXPORT int rvm_kernel_(\w+)\(", source)
              if "matmul" in f]
    kernel = _kernel_source(source, name)
    assert "RVM_UNLIKELY(rvm_ov" in kernel
    assert not re.search(r"if \(rvm_ov", kernel)
    # and every error path is cold, however many parameters a kernel checks
    assert "void RVMAPISetLastError(const char* msg) __attribute__((cold));" in source
    tiled = relax.VirtualMachine(ex, rvm.cpu())["main"]
    naive = relax.VirtualMachine(relax.build(mod, default_schedule=False), rvm.cpu())["main"]
    for shape in ((1, 1), (3, 7), (2, 37)):
        x = RNG.standard_normal(shape + (23,)).astype("float32")
        np.testing.assert_allclose(tiled(x).numpy(), naive(x).numpy(), rtol=1e-4, atol=1e-4,
                                   err_msg=f"rows {shape}")
