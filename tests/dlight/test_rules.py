"""The default CPU rules, Before/After in script form on representative shapes (2 cores,
AVX-512: 16 float32 lanes)."""
import pytest

from rvm.dlight import CPUInfo, RULES, schedule_func
from rvm.ir.base import assert_structural_equal
from rvm.script import ir as I
from rvm.script import tir as T

INFO = CPUInfo(vector_bytes=64, cores=2)


def _scheduled(mod, info=INFO):
    return schedule_func(mod["main"], RULES, info)


@I.ir_module
class Chain:
    @T.prim_func
    def main(A: T.Buffer((4096, 4100), "float32"), C: T.Buffer((4096, 4100), "float32")):
        B = T.alloc_buffer((4096, 4100))
        for i, j in T.grid(4096, 4100):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + T.float32(1)
        for i, j in T.grid(4096, 4100):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = T.max(B[vi, vj], T.float32(0))

@I.ir_module
class RowMax:
    @T.prim_func
    def main(A: T.Buffer((1, 16384, 1024), "float32"), M: T.Buffer((1, 16384), "float32")):
        for b, i, k in T.grid(1, 16384, 1024):
            with T.block("M"):
                vb, vi, vk = T.axis.remap("SSR", [b, i, k])
                with T.init():
                    M[vb, vi] = T.float32(-3.4e38)
                M[vb, vi] = T.max(M[vb, vi], A[vb, vi, vk])

@I.ir_module
class Dense:
    @T.prim_func
    def main(A: T.Buffer((64, 2816), "float32"), W: T.Buffer((2816, 96), "float32"),
             bias: T.Buffer((96,), "float32"), D: T.Buffer((64, 96), "float32")):
        C = T.alloc_buffer((64, 96))
        for i, j, k in T.grid(64, 96, 2816):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * W[vk, vj]
        for i, j in T.grid(64, 96):
            with T.block("D"):
                vi, vj = T.axis.remap("SS", [i, j])
                D[vi, vj] = T.max(C[vi, vj] + bias[vj], T.float32(0))


@I.ir_module
class DenseNT:
    @T.prim_func
    def main(A: T.Buffer((64, 256), "float32"), W: T.Buffer((96, 256), "float32"),
             bias: T.Buffer((96,), "float32"), D: T.Buffer((64, 96), "float32")):
        C = T.alloc_buffer((64, 96))
        for i, j, k in T.grid(64, 96, 256):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * W[vj, vk]
        for i, j in T.grid(64, 96):
            with T.block("D"):
                vi, vj = T.axis.remap("SS", [i, j])
                D[vi, vj] = T.max(C[vi, vj] + bias[vj], T.float32(0))


def test_an_elementwise_chain_is_inlined_fused_parallel_and_vectorized():
    # 4100 columns: a 64-lane vector loop (4 registers) with a predicated tail
    @T.prim_func
    def expected(A: T.Buffer((4096, 4100), "float32"), C: T.Buffer((4096, 4100), "float32")):
        T.func_attr({"tir.is_scheduled": "generic"})
        for i_j_0_fused in T.parallel(266240):
            for j_1 in T.vectorized(64):
                with T.block("C"):
                    vi = T.axis.spatial(4096, i_j_0_fused // 65)
                    vj = T.axis.spatial(4100, i_j_0_fused % 65 * 64 + j_1)
                    T.where(i_j_0_fused % 65 * 64 + j_1 < 4100)
                    T.reads(A[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = T.max(A[vi, vj] + T.float32(1.0), T.float32(0.0))

    assert_structural_equal(_scheduled(Chain), expected.with_attr("global_symbol", "main"))


def test_a_row_reduction_runs_its_first_long_spatial_loop_in_parallel():
    # the reduction loop stays innermost and serial: LocalizeReduction makes it a SIMD one
    @T.prim_func
    def expected(A: T.Buffer((1, 16384, 1024), "float32"), M: T.Buffer((1, 16384), "float32")):
        T.func_attr({"tir.is_scheduled": "generic"})
        for b in range(1):
            for i in T.parallel(16384):
                for k in range(1024):
                    with T.block("M"):
                        vb, vi, vk = T.axis.remap("SSR", [b, i, k])
                        T.reads(A[vb, vi, vk])
                        T.writes(M[vb, vi])
                        with T.init():
                            M[vb, vi] = T.float32(-3.4e+38)
                        M[vb, vi] = T.max(M[vb, vi], A[vb, vi, vk])

    assert_structural_equal(_scheduled(RowMax), expected.with_attr("global_symbol", "main"))


def test_a_dense_with_epilogue_gets_packed_panels_and_a_register_tile():
    # 96 columns: panels 48 wide (3 registers; 64 does not divide 96), packed once per call
    # (64 rows read them) so each k reads 48 contiguous weights; 8 rows x 3 registers = 24
    # accumulators, the vector loop outside the unrolled rows (one load of W feeds 8 FMAs);
    # bias and relu applied when the tile is written back
    @T.prim_func
    def expected(A: T.Buffer((64, 2816), "float32"), W: T.Buffer((2816, 96), "float32"),
                 bias: T.Buffer((96,), "float32"), D: T.Buffer((64, 96), "float32")):
        T.func_attr({"tir.is_scheduled": "matmul"})
        W_global = T.alloc_buffer((2, 2816, 48))
        C_local = T.alloc_buffer((64, 96), scope="local")
        for ax1_0, ax0 in T.grid(2, 2816):
            for ax1_1 in T.vectorized(48):
                with T.block("W_global"):
                    v0 = T.axis.remap("S", [ax0])
                    v1 = T.axis.spatial(96, ax1_0 * 48 + ax1_1)
                    T.reads(W[v0, v1])
                    T.writes(W_global[v1 // 48, v0, v1 % 48])
                    T.block_attr({"meta_schedule.layout_rewrite_preproc": 1})
                    W_global[v1 // 48, v0, v1 % 48] = W[v0, v1]
        for j_0_i_0_fused in T.parallel(16):
            for i_1_init in range(8):
                for j_1_init in T.vectorized(48):
                    with T.block("C_init"):
                        vi_init = T.axis.spatial(64, j_0_i_0_fused % 8 * 8 + i_1_init)
                        vj_init = T.axis.spatial(96, j_0_i_0_fused // 8 * 48 + j_1_init)
                        T.reads()
                        T.writes(C_local[vi_init, vj_init])
                        C_local[vi_init, vj_init] = T.float32(0.0)
            for k in range(2816):
                for j_1 in T.vectorized(48):
                    for i_1 in T.unroll(8):
                        with T.block("C"):
                            vi = T.axis.spatial(64, j_0_i_0_fused % 8 * 8 + i_1)
                            vj = T.axis.spatial(96, j_0_i_0_fused // 8 * 48 + j_1)
                            vk = T.axis.remap("R", [k])
                            T.reads(C_local[vi, vj], A[vi, vk], W_global[vj // 48, vk, vj % 48])
                            T.writes(C_local[vi, vj])
                            C_local[vi, vj] = C_local[vi, vj] \
                                + A[vi, vk] * W_global[vj // 48, vk, vj % 48]
            for ax0 in range(8):
                for ax1 in T.vectorized(48):
                    with T.block("C_local"):
                        v0 = T.axis.spatial(64, j_0_i_0_fused % 8 * 8 + ax0)
                        v1 = T.axis.spatial(96, j_0_i_0_fused // 8 * 48 + ax1)
                        T.reads(C_local[v0, v1], bias[v1])
                        T.writes(D[v0, v1])
                        D[v0, v1] = T.max(C_local[v0, v1] + bias[v1], T.float32(0.0))

    assert_structural_equal(_scheduled(Dense), expected.with_attr("global_symbol", "main"))


def test_an_nt_dense_gets_vector_accumulators_per_lane_summed_at_write_back():
    # both operands contiguous along k: 4 x 4 accumulators of 16 lanes of k (rfactor), one
    # horizontal sum per output, bias and relu on the 4 x 4 tile
    @T.prim_func
    def expected(A: T.Buffer((64, 256), "float32"), W: T.Buffer((96, 256), "float32"),
                 bias: T.Buffer((96,), "float32"), D: T.Buffer((64, 96), "float32")):
        T.func_attr({"tir.is_scheduled": "matmul"})
        C = T.alloc_buffer((64, 96))
        C_rf_local = T.alloc_buffer((64, 96, 16), scope="local")
        for i_0_j_0_fused in range(384):
            for i_1_init in T.unroll(4):
                for j_1_init in T.unroll(4):
                    for k_1_init in T.vectorized(16):
                        with T.block("C_rf_init"):
                            vi_init = T.axis.spatial(64, i_0_j_0_fused // 24 * 4 + i_1_init)
                            vj_init = T.axis.spatial(96, i_0_j_0_fused % 24 * 4 + j_1_init)
                            vk_1_init = T.axis.remap("S", [k_1_init])
                            T.reads()
                            T.writes(C_rf_local[vi_init, vj_init, vk_1_init])
                            C_rf_local[vi_init, vj_init, vk_1_init] = T.float32(0.0)
            for k_0 in range(16):
                for i_1 in T.unroll(4):
                    for j_1 in T.unroll(4):
                        for k_1 in T.vectorized(16):
                            with T.block("C_rf"):
                                vi = T.axis.spatial(64, i_0_j_0_fused // 24 * 4 + i_1)
                                vj = T.axis.spatial(96, i_0_j_0_fused % 24 * 4 + j_1)
                                vk_1, vk_0 = T.axis.remap("SR", [k_1, k_0])
                                T.reads(C_rf_local[vi, vj, vk_1],
                                        A[vi, vk_0 * 16 + vk_1], W[vj, vk_0 * 16 + vk_1])
                                T.writes(C_rf_local[vi, vj, vk_1])
                                C_rf_local[vi, vj, vk_1] = C_rf_local[vi, vj, vk_1] \
                                    + A[vi, vk_0 * 16 + vk_1] * W[vj, vk_0 * 16 + vk_1]
            for ax0, ax1, ax2 in T.grid(4, 4, 16):
                with T.block("C"):
                    vi = T.axis.spatial(64, i_0_j_0_fused // 24 * 4 + ax0)
                    vj = T.axis.spatial(96, i_0_j_0_fused % 24 * 4 + ax1)
                    vk_1 = T.axis.remap("R", [ax2])
                    T.reads(C_rf_local[vi, vj, vk_1])
                    T.writes(C[vi, vj])
                    with T.init():
                        C[vi, vj] = T.float32(0.0)
                    C[vi, vj] = C[vi, vj] + C_rf_local[vi, vj, vk_1]
            for ax0, ax1 in T.grid(4, 4):
                with T.block("D"):
                    vi = T.axis.spatial(64, i_0_j_0_fused // 24 * 4 + ax0)
                    vj = T.axis.spatial(96, i_0_j_0_fused % 24 * 4 + ax1)
                    T.reads(C[vi, vj], bias[vj])
                    T.writes(D[vi, vj])
                    D[vi, vj] = T.max(C[vi, vj] + bias[vj], T.float32(0.0))

    assert_structural_equal(_scheduled(DenseNT), expected.with_attr("global_symbol", "main"))


def test_one_core_or_little_work_keeps_every_loop_serial():
    # (the shapes above are just long enough: 2^24 iterations run in parallel)
    for mod in (Chain, RowMax, Dense):
        func = _scheduled(mod, CPUInfo(vector_bytes=64, cores=1))
        assert func.get_attr("tir.is_scheduled")
        assert "T.parallel" not in func.script()
    # a register-tiled matmul takes threads from 2^21 multiply-adds (MATMUL_PARALLEL_MIN_WORK):
    # 16 x 784 x 128 (1.6M) stays serial, the 64-row MLP layer (6.4M) runs on both cores
    small = schedule_func(_small_dense(16), RULES, INFO)
    assert small.get_attr("tir.is_scheduled") == "matmul"
    assert "T.parallel" not in small.script()
    assert "T.parallel" in schedule_func(_small_dense(64), RULES, INFO).script()


def _small_dense(rows):
    @T.prim_func
    def small(A: T.Buffer((rows, 784), "float32"), W: T.Buffer((784, 128), "float32"),
              C: T.Buffer((rows, 128), "float32")):
        for i, j, k in T.grid(rows, 128, 784):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * W[vk, vj]

    return small


def test_the_vector_width_follows_the_cpu():
    # AVX2: 8 float32 lanes, so 4 registers are 32 lanes
    func = _scheduled(Chain, CPUInfo(vector_bytes=32, cores=2))
    assert "T.vectorized(32)" in func.script()


def test_a_kernel_with_a_schedule_of_its_own_is_kept():
    tuned = Dense["main"].with_attr("op_pattern", 8)  # what a tuning record swaps in
    assert schedule_func(tuned, RULES, INFO) is tuned
    done = _scheduled(Dense)
    assert schedule_func(done, RULES, INFO) is done
    hand = Chain["main"].with_attr("tir.is_scheduled", 0)
    from rvm.tir.schedule import Schedule
    sch = Schedule(hand)
    sch.parallel(sch.get_loops(sch.get_block("B"))[0])
    assert schedule_func(sch.mod["main"], RULES, INFO) is sch.mod["main"]


@pytest.mark.parametrize("kwargs", [dict(vector_bytes=2), dict(cores=0)])
def test_cpu_info_rejects_nonsense(kwargs):
    with pytest.raises(ValueError, match="CPUInfo expects vector_bytes >= 4 and cores >= 1"):
        CPUInfo(**kwargs)


def test_a_nest_of_int64_and_int32_loops_is_scheduled_without_fusing_them():
    # fuse refuses loops of two index dtypes: the outermost long loop runs in parallel alone
    @T.prim_func
    def mixed(A: T.Buffer((T.int64(2), 64, 512), "float32"),
              B: T.Buffer((T.int64(2), 512, 512), "float32"),
              C: T.Buffer((T.int64(2), 64, 512), "float32")):
        for b, i, j, k in T.grid(T.int64(2), 64, 512, 512):
            with T.block("C"):
                vb, vi, vj, vk = T.axis.remap("SSSR", [b, i, j, k])
                with T.init():
                    C[vb, vi, vj] = T.float32(0)
                C[vb, vi, vj] = C[vb, vi, vj] + A[vb, vi, vk] * B[vb, vk, vj]

    func = schedule_func(mixed, RULES, INFO)
    assert func.get_attr("tir.is_scheduled") == "matmul"
    assert "for b in T.parallel(T.int64(2)):" in func.script()


def test_a_scatter_or_an_in_place_update_is_left_serial():
    # two iterations may write one element (idx repeats): neither threads nor SIMD lanes
    @T.prim_func
    def scatter(idx: T.Buffer((T.int64(1048576),), "int64"),
                v: T.Buffer((T.int64(1048576),), "float32"),
                out: T.Buffer((T.int64(1048576),), "float32")):
        for i in range(T.int64(1048576)):
            with T.block("s"):
                vi = T.axis.spatial(T.int64(1048576), i)
                out[idx[vi]] = v[vi]

    @T.prim_func
    def in_place(a: T.Buffer((T.int64(1048576),), "float32")):
        for i in range(T.int64(1048576)):
            with T.block("s"):
                vi = T.axis.spatial(T.int64(1048576), i)
                a[vi] = a[vi] * T.float32(2)

    for func in (scatter, in_place):
        assert schedule_func(func, RULES, INFO) is func


def test_symbolic_axes_are_split_for_the_vector_loop_and_never_fused_inside():
    # Attention scores (batch, heads, sequence, sequence), the sequence symbolic: the last
    # loop is split by the vector width (predicated tail), and the loops above it are not
    # fused (a fused index would divide by the symbolic extents: not affine, and every
    # access of the kernel range-checked). (A libm call there is partitioned into whole
    # vectors and a remainder instead: test_softmax_partition.py.)
    @T.prim_func
    def scores(a: T.handle, c: T.handle):
        n, s = T.int64(), T.int64()
        A = T.match_buffer(a, (n, T.int64(4), s, s))
        C = T.match_buffer(c, (n, T.int64(4), s, s))
        for b, h, i, j in T.grid(n, T.int64(4), s, s):
            with T.block("C"):
                vb, vh, vi, vj = T.axis.remap("SSSS", [b, h, i, j])
                C[vb, vh, vi, vj] = A[vb, vh, vi, vj] * T.float32(2)

    @T.prim_func
    def expected(a: T.handle, c: T.handle):
        T.func_attr({"tir.is_scheduled": "generic"})
        n, s = T.int64(), T.int64()
        A = T.match_buffer(a, (n, 4, s, s))
        C = T.match_buffer(c, (n, 4, s, s))
        for b, h, i, j_0 in T.grid(n, T.int64(4), s, (s + T.int64(63)) // T.int64(64)):
            for j_1 in T.vectorized(T.int64(64)):
                with T.block("C"):
                    vb, vh, vi = T.axis.remap("SSS", [b, h, i])
                    vj = T.axis.spatial(s, j_0 * T.int64(64) + j_1)
                    T.where(j_0 * T.int64(64) + j_1 < s)
                    T.reads(A[vb, vh, vi, vj])
                    T.writes(C[vb, vh, vi, vj])
                    C[vb, vh, vi, vj] = A[vb, vh, vi, vj] * T.float32(2)

    assert_structural_equal(schedule_func(scores, RULES, INFO),
                            expected.with_attr("global_symbol", "scores"))

    # a long constant loop above a symbolic one runs in parallel alone
    @T.prim_func
    def rows(a: T.handle, c: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (T.int64(4096), n, T.int64(4100)))
        C = T.match_buffer(c, (T.int64(4096), n, T.int64(4100)))
        for i, j, k in T.grid(T.int64(4096), n, T.int64(4100)):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSS", [i, j, k])
                C[vi, vj, vk] = A[vi, vj, vk] + T.float32(1)

    script = schedule_func(rows, RULES, INFO).script()
    assert "for i in T.parallel(T.int64(4096)):" in script and "_fused" not in script


def test_softmax_computes_its_exp_once():
    # exp (a libm call per element) feeds the sum and the normalization: it keeps its block
    # rather than being inlined into both
    from rvm import relax
    from rvm.relax.block_builder import BlockBuilder
    from rvm.relax.expr import Var
    from rvm.relax.struct_info import TensorStructInfo
    from rvm.relax.transform import LegalizeOps

    bb = BlockBuilder()
    x = Var("x", TensorStructInfo((64, 131), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(bb.emit(relax.op.nn.softmax(x)))
        bb.emit_func_output(out)
    legal = LegalizeOps()(bb.get())
    func = next(f for gv, f in legal.functions.items() if gv.name_hint == "softmax")
    script = schedule_func(func, RULES, INFO).script()
    assert script.count("T.exp(") == 1 and 'T.block("T_softmax_exp")' in script
    assert "T.vectorized" in script


def test_a_reshape_gets_a_vector_loop_that_divides_its_rows():
    # The CNN's 64x16x7x7 -> 64x784 flatten: 784 is no multiple of 64 lanes but is 7 * 112
    # (seven 16-lane vectors), so the vector loop has no predicated tail; lowering then folds
    # the four divisions of the index into one contiguous read.
    @T.prim_func
    def flatten(A: T.Buffer((T.int64(64), T.int64(16), T.int64(7), T.int64(7)), "float32"),
                B: T.Buffer((T.int64(64), T.int64(784)), "float32")):
        for i, j in T.grid(T.int64(64), T.int64(784)):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[(vi * T.int64(784) + vj) // T.int64(7) // T.int64(7)
                              // T.int64(16) % T.int64(64),
                              (vi * T.int64(784) + vj) // T.int64(7) // T.int64(7)
                              % T.int64(16),
                              (vi * T.int64(784) + vj) // T.int64(7) % T.int64(7),
                              (vi * T.int64(784) + vj) % T.int64(7)]

    @T.prim_func
    def expected(A: T.Buffer((T.int64(64), T.int64(16), T.int64(7), T.int64(7)), "float32"),
                 B: T.Buffer((T.int64(64), T.int64(784)), "float32")):
        T.func_attr({"tir.is_scheduled": "generic"})
        for i_j_0_fused in range(T.int64(448)):
            for j_1 in T.vectorized(T.int64(112)):
                with T.block("B"):
                    vi = T.axis.spatial(T.int64(64), i_j_0_fused // T.int64(7))
                    vj = T.axis.spatial(T.int64(784), i_j_0_fused % T.int64(7) * T.int64(112)
                                        + j_1)
                    B[vi, vj] = A[(vi * T.int64(784) + vj) // T.int64(7) // T.int64(7)
                                  // T.int64(16) % T.int64(64),
                                  (vi * T.int64(784) + vj) // T.int64(7) // T.int64(7)
                                  % T.int64(16),
                                  (vi * T.int64(784) + vj) // T.int64(7) % T.int64(7),
                                  (vi * T.int64(784) + vj) % T.int64(7)]

    scheduled = schedule_func(flatten.with_attr("global_symbol", "flatten"), RULES, INFO)
    assert_structural_equal(scheduled, expected.with_attr("global_symbol", "flatten"))
    from rvm.ir.module import IRModule
    from rvm.tir.transform.pipeline import lower_module

    lowered = lower_module(IRModule({"flatten": scheduled}))["flatten"].script()
    assert "B[j_1 + i_j_0_fused * T.int64(112)] = A[i_j_0_fused * T.int64(112) + j_1]" \
        in lowered, lowered


def test_a_transpose_gets_vectors_inside_the_runs_it_reads():
    # BERT's heads merged back, (2, 4, 9, 32) -> (2, 9, 128): a 64-lane vector would read
    # two runs of 32 from two heads (a gather); vectors of 32 read one run each, and the
    # lowered read is contiguous.
    @T.prim_func
    def merge_heads(A: T.Buffer((T.int64(2), T.int64(4), T.int64(9), T.int64(32)), "float32"),
                    B: T.Buffer((T.int64(2), T.int64(9), T.int64(128)), "float32")):
        C = T.alloc_buffer((T.int64(2), T.int64(9), T.int64(4), T.int64(32)))
        for b, s, h, d in T.grid(T.int64(2), T.int64(9), T.int64(4), T.int64(32)):
            with T.block("C"):
                vb, vs, vh, vd = T.axis.remap("SSSS", [b, s, h, d])
                C[vb, vs, vh, vd] = A[vb, vh, vs, vd]
        for b, s, k in T.grid(T.int64(2), T.int64(9), T.int64(128)):
            with T.block("B"):
                vb, vs, vk = T.axis.remap("SSS", [b, s, k])
                B[vb, vs, vk] = C[vb, vs, vk // T.int64(32), vk % T.int64(32)]

    @T.prim_func
    def expected(A: T.Buffer((T.int64(2), T.int64(4), T.int64(9), T.int64(32)), "float32"),
                 B: T.Buffer((T.int64(2), T.int64(9), T.int64(128)), "float32")):
        T.func_attr({"tir.is_scheduled": "generic"})
        for b_s_k_0_fused in range(T.int64(72)):
            for k_1 in T.vectorized(T.int64(32)):
                with T.block("B"):
                    vb = T.axis.spatial(T.int64(2), b_s_k_0_fused // T.int64(36))
                    vs = T.axis.spatial(T.int64(9), b_s_k_0_fused // T.int64(4) % T.int64(9))
                    vk = T.axis.spatial(T.int64(128),
                                        b_s_k_0_fused % T.int64(4) * T.int64(32) + k_1)
                    B[vb, vs, vk] = A[vb, vk // T.int64(32), vs, vk % T.int64(32)]

    scheduled = schedule_func(merge_heads.with_attr("global_symbol", "m"), RULES, INFO)
    assert_structural_equal(scheduled, expected.with_attr("global_symbol", "m"))
    from rvm.ir.module import IRModule
    from rvm.tir.transform.pipeline import lower_module

    lowered = lower_module(IRModule({"m": scheduled}))["m"].script()
    assert "k_1]" in lowered and "T.Div(k_1" not in lowered and "truncmod(k_1" not in lowered, \
        lowered
