"""The conv rule (NCHW convolutions vectorized over output channels): Before/After in script
form, the weight packed once at build when bound, and where it leaves a kernel to the
window rule (2 cores, AVX-512: 16 float32 lanes)."""
import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.dlight import CPUInfo, RULES, schedule_func
from rvm.dlight.cpu.conv_channels import channel_width, max_rows, row_count
from rvm.ir.base import assert_structural_equal
from rvm.relax.block_builder import BlockBuilder
from rvm.relax.expr import Var
from rvm.relax.struct_info import TensorStructInfo
from rvm.script import tir as T

INFO = CPUInfo(vector_bytes=64, cores=2)


@T.prim_func
def conv_bias_relu(x: T.Buffer((1, 16, 16, 16), "float32"),
                   w: T.Buffer((32, 16, 3, 3), "float32"),
                   b: T.Buffer((32,), "float32"), y: T.Buffer((1, 32, 14, 14), "float32")):
    conv = T.alloc_buffer((1, 32, 14, 14))
    for n, f, h, v, rc, ry, rx in T.grid(1, 32, 14, 14, 16, 3, 3):
        with T.block("conv"):
            vn, vf, vh, vw, vc, vy, vx = T.axis.remap("SSSSRRR", [n, f, h, v, rc, ry, rx])
            with T.init():
                conv[vn, vf, vh, vw] = T.float32(0)
            conv[vn, vf, vh, vw] = conv[vn, vf, vh, vw] \
                + x[vn, vc, vh + vy, vw + vx] * w[vf, vc, vy, vx]
    for n, f, h, v in T.grid(1, 32, 14, 14):
        with T.block("y"):
            vn, vf, vh, vw = T.axis.remap("SSSS", [n, f, h, v])
            y[vn, vf, vh, vw] = T.max(conv[vn, vf, vh, vw] + b[vf], T.float32(0))


def test_an_nchw_conv_gets_a_tile_of_output_columns_by_a_vector_of_channels():
    # the weight packed into [f // 16, c, ky, kx, f % 16] (a copy SplitLayoutRewritePreproc
    # applies at build to a bound weight); per output row and 16 channels, 14 columns of
    # vector accumulators stored [.., x, f], rc/ry/rx outside them: one load of the packed
    # weight feeds 14 FMAs, each with one input element broadcast; the bias and relu (read
    # per channel) run on those vectors of channels into a second tile, y_local; 14 columns
    # fill no vector of STORE_LANES, so the write-back copies it over the columns with the
    # channels unrolled inside (an interleaved read that gcc transposes with permutes)
    @T.prim_func
    def expected(x: T.Buffer((1, 16, 16, 16), "float32"), w: T.Buffer((32, 16, 3, 3), "float32"),
                 b: T.Buffer((32,), "float32"), y: T.Buffer((1, 32, 14, 14), "float32")):
        T.func_attr({"tir.is_scheduled": "conv"})
        w_global = T.alloc_buffer((2, 16, 3, 3, 16))
        conv_local = T.alloc_buffer((1, 14, 14, 32), scope="local")
        y_local = T.alloc_buffer((1, 14, 14, 32), scope="local")
        for ax0_0, ax1, ax2, ax3, ax0_1 in T.grid(2, 16, 3, 3, 16):
            with T.block("w_global"):
                v0 = T.axis.spatial(32, ax0_0 * 16 + ax0_1)
                v1, v2, v3 = T.axis.remap("SSS", [ax1, ax2, ax3])
                T.reads(w[v0, v1, v2, v3])
                T.writes(w_global[v0 // 16, v1, v2, v3, v0 % 16])
                T.block_attr({"meta_schedule.layout_rewrite_preproc": 1})
                w_global[v0 // 16, v1, v2, v3, v0 % 16] = w[v0, v1, v2, v3]
        for n_h_fused in T.parallel(14):
            for f_0, v_0 in T.grid(2, 1):
                for v_1_init in T.unroll(14):
                    for f_1_init in T.vectorized(16):
                        with T.block("conv_init"):
                            vn = T.axis.spatial(1, 0)
                            vf = T.axis.spatial(32, f_0 * 16 + f_1_init)
                            vh = T.axis.spatial(14, n_h_fused)
                            vw = T.axis.spatial(14, v_0 * 14 + v_1_init)
                            T.reads()
                            T.writes(conv_local[vn, vh, vw, vf])
                            conv_local[vn, vh, vw, vf] = T.float32(0.0)
                for rc, ry, rx in T.grid(16, 3, 3):
                    for f_1 in T.vectorized(16):
                        for v_1 in T.unroll(14):
                            with T.block("conv_update"):
                                vn = T.axis.spatial(1, 0)
                                vf = T.axis.spatial(32, f_0 * 16 + f_1)
                                vh = T.axis.spatial(14, n_h_fused)
                                vw = T.axis.spatial(14, v_0 * 14 + v_1)
                                vc, vy, vx = T.axis.remap("RRR", [rc, ry, rx])
                                T.reads(conv_local[vn, vh, vw, vf], x[vn, vc, vh + vy, vw + vx],
                                        w_global[vf // 16, vc, vy, vx, vf % 16])
                                T.writes(conv_local[vn, vh, vw, vf])
                                conv_local[vn, vh, vw, vf] = conv_local[vn, vh, vw, vf] \
                                    + x[vn, vc, vh + vy, vw + vx] * w_global[vf // 16, vc, vy, vx,
                                                                             vf % 16]
                for ax1 in T.unroll(14):
                    for ax0 in T.vectorized(16):
                        with T.block("y"):
                            vn = T.axis.spatial(1, 0)
                            vf = T.axis.spatial(32, f_0 * 16 + ax0)
                            vh = T.axis.spatial(14, n_h_fused)
                            vw = T.axis.spatial(14, v_0 * 14 + ax1)
                            T.reads(conv_local[vn, vh, vw, vf], b[vf])
                            T.writes(y_local[vn, vh, vw, vf])
                            y_local[vn, vh, vw, vf] = T.max(conv_local[vn, vh, vw, vf] + b[vf],
                                                            T.float32(0.0))
                for ax1 in T.vectorized(14):
                    for ax0 in T.unroll(16):
                        with T.block("y_local"):
                            v0 = T.axis.spatial(1, 0)
                            v1 = T.axis.spatial(32, f_0 * 16 + ax0)
                            v2 = T.axis.spatial(14, n_h_fused)
                            v3 = T.axis.spatial(14, v_0 * 14 + ax1)
                            T.reads(y_local[v0, v2, v3, v1])
                            T.writes(y[v0, v1, v2, v3])
                            y[v0, v1, v2, v3] = y_local[v0, v2, v3, v1]

    assert_structural_equal(schedule_func(conv_bias_relu, RULES, INFO),
                            expected.with_attr("global_symbol", "conv_bias_relu"))


@T.prim_func
def conv_residual(x: T.Buffer((1, 16, 10, 10), "float32"),
                  w: T.Buffer((32, 16, 3, 3), "float32"),
                  r: T.Buffer((1, 32, 8, 8), "float32"), y: T.Buffer((1, 32, 8, 8), "float32")):
    conv = T.alloc_buffer((1, 32, 8, 8))
    for n, f, h, v, rc, ry, rx in T.grid(1, 32, 8, 8, 16, 3, 3):
        with T.block("conv"):
            vn, vf, vh, vw, vc, vy, vx = T.axis.remap("SSSSRRR", [n, f, h, v, rc, ry, rx])
            with T.init():
                conv[vn, vf, vh, vw] = T.float32(0)
            conv[vn, vf, vh, vw] = conv[vn, vf, vh, vw] \
                + x[vn, vc, vh + vy, vw + vx] * w[vf, vc, vy, vx]
    for n, f, h, v in T.grid(1, 32, 8, 8):
        with T.block("y"):
            vn, vf, vh, vw = T.axis.remap("SSSS", [n, f, h, v])
            y[vn, vf, vh, vw] = T.max(conv[vn, vf, vh, vw] + r[vn, vf, vh, vw], T.float32(0))


def test_a_batch_one_resnet_conv_on_8x8_runs_its_rows_on_threads_and_stores_columns():
    # the ResNet's 32 -> 32 channel 3 x 3 conv at batch 1 (0.3 million multiply-adds, above
    # CONV_PARALLEL_MIN_WORK): its 8 output rows in parallel, two 16-channel tiles of a whole
    # 8-column row each, and the write-back (residual added, relu) over the 8 columns, one
    # contiguous vector store per channel instead of 8 stores a map apart
    @T.prim_func
    def expected(x: T.Buffer((1, 16, 10, 10), "float32"), w: T.Buffer((32, 16, 3, 3), "float32"),
                 r: T.Buffer((1, 32, 8, 8), "float32"), y: T.Buffer((1, 32, 8, 8), "float32")):
        T.func_attr({"tir.is_scheduled": "conv"})
        w_global = T.alloc_buffer((2, 16, 3, 3, 16))
        conv_local = T.alloc_buffer((1, 8, 8, 32), scope="local")
        for ax0_0, ax1, ax2, ax3, ax0_1 in T.grid(2, 16, 3, 3, 16):
            with T.block("w_global"):
                v0 = T.axis.spatial(32, ax0_0 * 16 + ax0_1)
                v1, v2, v3 = T.axis.remap("SSS", [ax1, ax2, ax3])
                T.reads(w[v0, v1, v2, v3])
                T.writes(w_global[v0 // 16, v1, v2, v3, v0 % 16])
                T.block_attr({"meta_schedule.layout_rewrite_preproc": 1})
                w_global[v0 // 16, v1, v2, v3, v0 % 16] = w[v0, v1, v2, v3]
        for n_h_fused in T.parallel(8):
            for f_0, v_0 in T.grid(2, 1):
                for v_1_init in T.unroll(8):
                    for f_1_init in T.vectorized(16):
                        with T.block("conv_init"):
                            vn = T.axis.spatial(1, 0)
                            vf = T.axis.spatial(32, f_0 * 16 + f_1_init)
                            vh = T.axis.spatial(8, n_h_fused)
                            vw = T.axis.spatial(8, v_0 * 8 + v_1_init)
                            T.reads()
                            T.writes(conv_local[vn, vh, vw, vf])
                            conv_local[vn, vh, vw, vf] = T.float32(0.0)
                for rc, ry, rx in T.grid(16, 3, 3):
                    for f_1 in T.vectorized(16):
                        for v_1 in T.unroll(8):
                            with T.block("conv_update"):
                                vn = T.axis.spatial(1, 0)
                                vf = T.axis.spatial(32, f_0 * 16 + f_1)
                                vh = T.axis.spatial(8, n_h_fused)
                                vw = T.axis.spatial(8, v_0 * 8 + v_1)
                                vc, vy, vx = T.axis.remap("RRR", [rc, ry, rx])
                                T.reads(conv_local[vn, vh, vw, vf], x[vn, vc, vh + vy, vw + vx],
                                        w_global[vf // 16, vc, vy, vx, vf % 16])
                                T.writes(conv_local[vn, vh, vw, vf])
                                conv_local[vn, vh, vw, vf] = conv_local[vn, vh, vw, vf] \
                                    + x[vn, vc, vh + vy, vw + vx] * w_global[vf // 16, vc, vy,
                                                                             vx, vf % 16]
                for ax0 in range(16):
                    for ax1 in T.vectorized(8):
                        with T.block("conv_local"):
                            v0 = T.axis.spatial(1, 0)
                            v1 = T.axis.spatial(32, f_0 * 16 + ax0)
                            v2 = T.axis.spatial(8, n_h_fused)
                            v3 = T.axis.spatial(8, v_0 * 8 + ax1)
                            T.reads(conv_local[v0, v2, v3, v1], r[v0, v1, v2, v3])
                            T.writes(y[v0, v1, v2, v3])
                            y[v0, v1, v2, v3] = T.max(conv_local[v0, v2, v3, v1]
                                                      + r[v0, v1, v2, v3], T.float32(0.0))

    assert_structural_equal(schedule_func(conv_residual, RULES, INFO),
                            expected.with_attr("global_symbol", "conv_residual"))


@pytest.mark.parametrize("channels,width", [(1, 1), (3, 3), (8, 8), (16, 16), (64, 16),
                                            (40, 10), (24, 12), (17, None), (37, None)])
def test_the_channel_tile_is_a_vector_or_a_divisor_of_at_least_half_of_one(channels, width):
    assert channel_width(channels, 16) == width


@pytest.mark.parametrize("columns,rows", [(14, 14), (28, 14), (32, 8), (8, 8), (3, 3),
                                          (17, 1), (34, 2)])
def test_the_column_tile_is_the_largest_divisor_up_to_max_rows(columns, rows):
    assert row_count(columns) == rows


@pytest.mark.parametrize("width,lanes,vector_bytes,limit", [
    (8, 16, 64, 28), (3, 16, 64, 28), (16, 16, 64, 16), (10, 16, 64, 16),
    (4, 8, 32, 14), (8, 8, 32, 14),  # AVX2: 16 registers hold no more accumulators
])
def test_half_vector_channel_tiles_take_twice_the_columns_on_avx512(width, lanes,
                                                                    vector_bytes, limit):
    assert max_rows(width, lanes, vector_bytes) == limit
    assert row_count(28, limit) == (28 if limit == 28 else 14)
    # a 16- or 32-wide map: tiles of 16 columns with AVX-512's 32 registers, 8 with AVX2's 16
    assert row_count(32, limit) == (16 if vector_bytes == 64 else 8)


def _conv_module(xshape, w, stride, padding):
    bb = BlockBuilder()
    x = Var("x", TensorStructInfo(xshape, "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            out = relax.op.nn.relu(relax.op.nn.conv2d(x, relax.const(w), stride, padding))
            out = bb.emit_output(bb.emit(out))
        bb.emit_func_output(out)
    return bb.get()


# (x shape, weight shape, stride, padding, the packed weight's shape at build)
BOUND = [
    ("vector_panels", (2, 5, 9, 14), (32, 5, 3, 3), 1, 1, (2, 5, 3, 3, 16)),
    ("eight_channels", (1, 1, 28, 28), (8, 1, 3, 3), 1, 1, (1, 1, 3, 3, 8)),
    ("stride2_7x7", (1, 3, 20, 16), (16, 3, 7, 7), 2, 3, (1, 3, 7, 7, 16)),
]


@pytest.mark.parametrize("name,xshape,wshape,stride,padding,packed", BOUND,
                         ids=[b[0] for b in BOUND])
def test_a_bound_weight_is_packed_at_build_and_computes_the_same(name, xshape, wshape, stride,
                                                                padding, packed):
    rng = np.random.default_rng(3)
    w = rng.standard_normal(wshape).astype("float32")
    x = rng.standard_normal(xshape).astype("float32")
    mod = _conv_module(xshape, w, stride, padding)
    ex = relax.build(mod)
    assert [tuple(c.shape) for c in ex.constants if hasattr(c, "numpy")] == [packed]
    assert "layout_rewrite_preproc" not in "".join(lib.source for lib in ex.kernel_libs)
    got = relax.VirtualMachine(ex, rvm.cpu())["main"](x).numpy()
    naive = relax.build(mod, default_schedule=False)
    assert [tuple(c.shape) for c in naive.constants if hasattr(c, "numpy")] == [wshape]
    want = relax.VirtualMachine(naive, rvm.cpu())["main"](x).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_grouped_depthwise_and_prime_wide_convs_are_left_to_the_window_rule():
    @T.prim_func
    def depthwise(x: T.Buffer((1, 16, 10, 10), "float32"), w: T.Buffer((16, 1, 3, 3), "float32"),
                  y: T.Buffer((1, 16, 8, 8), "float32")):
        for n, f, h, v, rc, ry, rx in T.grid(1, 16, 8, 8, 1, 3, 3):
            with T.block("conv"):
                vn, vf, vh, vw, vc, vy, vx = T.axis.remap("SSSSRRR", [n, f, h, v, rc, ry, rx])
                with T.init():
                    y[vn, vf, vh, vw] = T.float32(0)
                y[vn, vf, vh, vw] = y[vn, vf, vh, vw] \
                    + x[vn, vf + vc, vh + vy, vw + vx] * w[vf, vc, vy, vx]

    @T.prim_func
    def prime_wide(x: T.Buffer((1, 4, 19, 19), "float32"), w: T.Buffer((16, 4, 3, 3), "float32"),
                   y: T.Buffer((1, 16, 17, 17), "float32")):
        for n, f, h, v, rc, ry, rx in T.grid(1, 16, 17, 17, 4, 3, 3):
            with T.block("conv"):
                vn, vf, vh, vw, vc, vy, vx = T.axis.remap("SSSSRRR", [n, f, h, v, rc, ry, rx])
                with T.init():
                    y[vn, vf, vh, vw] = T.float32(0)
                y[vn, vf, vh, vw] = y[vn, vf, vh, vw] \
                    + x[vn, vc, vh + vy, vw + vx] * w[vf, vc, vy, vx]

    for func in (depthwise, prime_wide):
        assert schedule_func(func, RULES, INFO).get_attr("tir.is_scheduled") == "window"


def _conv_func(batch, channels, filters, size):
    from rvm.te.create_prim_func import create_prim_func
    from rvm.te.operation import placeholder
    from rvm.topi.nn import conv2d_nchw

    x = placeholder((batch, channels, size, size), name="x")
    w = placeholder((filters, channels, 3, 3), name="w")
    return create_prim_func([x, w, conv2d_nchw(x, w, 1, 1, 1)])


@pytest.mark.parametrize("batch,channels,filters,size,parallel", [
    (64, 8, 16, 14, True),     # the CNN's second conv at batch 64: 14.4 million MACs
    (64, 1, 8, 28, True),      # its first: 3.6 million
    (1, 16, 16, 16, True),     # a ResNet 3 x 3 conv at batch 1: 0.6 million
    (1, 16, 32, 8, True),      # its 32-channel one on 8 x 8 at batch 1: 0.3 million
    (1, 8, 16, 8, False),      # 0.07 million: one core
])
def test_output_rows_run_in_parallel_from_parallel_min_macs(batch, channels, filters, size,
                                                             parallel):
    func = schedule_func(_conv_func(batch, channels, filters, size), RULES, INFO)
    assert func.get_attr("tir.is_scheduled") == "conv"
    assert ("T.parallel(" in func.script()) == parallel
    one_core = schedule_func(_conv_func(batch, channels, filters, size), RULES,
                             CPUInfo(vector_bytes=64, cores=1))
    assert "T.parallel(" not in one_core.script()


@pytest.mark.parametrize("size,store", [(32, "for ax1 in T.vectorized(16):"),   # 16 columns
                                        (16, "for ax1 in T.vectorized(16):"),
                                        (8, "for ax1 in T.vectorized(8):"),
                                        (28, "for ax1 in T.vectorized(14):"),   # 14 columns
                                        (12, "for ax1 in T.vectorized(12):")])  # 12 columns
def test_the_write_back_runs_over_columns_when_they_fill_store_vectors(size, store):
    # 16 or 8 columns: one vector over the columns per channel; 14 or 12 (no whole vectors of
    # STORE_LANES): the columns vectorized outside, the channels unrolled inside, never the
    # channel order (a store per element, a map apart)
    text = schedule_func(_conv_func(1, 3, 16, size), RULES, INFO).script()
    assert store in text
    assert ("for ax0 in T.unroll(16):" in text) == (size in (28, 12))
    columns = {32: 16, 16: 16, 8: 8, 28: 14, 12: 12}[size]  # the tile's, MAX_WIDE_ROWS at most
    assert f"for xx_1 in T.unroll({columns}):" in text
    assert "for ax0 in T.vectorized(16):" not in text


@T.prim_func
def conv_eight(x: T.Buffer((1, 1, 30, 30), "float32"), w: T.Buffer((8, 1, 3, 3), "float32"),
               y: T.Buffer((1, 8, 28, 28), "float32")):
    for n, f, h, v, rc, ry, rx in T.grid(1, 8, 28, 28, 1, 3, 3):
        with T.block("conv"):
            vn, vf, vh, vw, vc, vy, vx = T.axis.remap("SSSSRRR", [n, f, h, v, rc, ry, rx])
            with T.init():
                y[vn, vf, vh, vw] = T.float32(0)
            y[vn, vf, vh, vw] = y[vn, vf, vh, vw] + x[vn, vc, vh + vy, vw + vx] * w[vf, vc, vy, vx]


def test_an_eight_channel_conv_tiles_a_whole_28_column_row_on_avx512_and_14_on_avx2():
    avx512 = schedule_func(conv_eight, RULES, INFO).script()
    assert "for f_1 in T.vectorized(8):" in avx512 and "T.unroll(28)" in avx512
    avx2 = schedule_func(conv_eight, RULES, CPUInfo(vector_bytes=32, cores=2)).script()
    assert "for f_1 in T.vectorized(8):" in avx2 and "T.unroll(14)" in avx2


@T.prim_func
def conv_bias_nhwc(x: T.Buffer((1, 16, 16, 16), "float32"), w: T.Buffer((32, 16, 3, 3), "float32"),
                   b: T.Buffer((32,), "float32"), y: T.Buffer((1, 14, 14, 32), "float32")):
    conv = T.alloc_buffer((1, 32, 14, 14))
    for n, f, h, v, rc, ry, rx in T.grid(1, 32, 14, 14, 16, 3, 3):
        with T.block("conv"):
            vn, vf, vh, vw, vc, vy, vx = T.axis.remap("SSSSRRR", [n, f, h, v, rc, ry, rx])
            with T.init():
                conv[vn, vf, vh, vw] = T.float32(0)
            conv[vn, vf, vh, vw] = conv[vn, vf, vh, vw] \
                + x[vn, vc, vh + vy, vw + vx] * w[vf, vc, vy, vx]
    for n, f, h, v in T.grid(1, 32, 14, 14):
        with T.block("y"):
            vn, vf, vh, vw = T.axis.remap("SSSS", [n, f, h, v])
            y[vn, vh, vw, vf] = T.max(conv[vn, vf, vh, vw] + b[vf], T.float32(0))


@pytest.mark.parametrize("func,on_channels", [
    (conv_bias_relu, True),    # a bias read per channel: computed on the vectors of channels
    (conv_residual, False),    # a residual read per column: inlined into the write-back
    (conv_bias_nhwc, False),   # an epilogue writing another layout than the conv's
])
def test_only_a_per_channel_epilogue_runs_on_the_accumulators_channel_vectors(func, on_channels):
    from rvm.driver.build_module import build

    scheduled = schedule_func(func, RULES, INFO)
    assert scheduled.get_attr("tir.is_scheduled") == "conv"
    assert ('T.block("y_local")' in scheduled.script()) == on_channels
    rng = np.random.default_rng(5)
    shapes = [tuple(int(d) for d in func.buffer_map[p].shape) for p in func.params]
    arrays = [rng.standard_normal(s).astype("float32") for s in shapes]
    outs = []
    for f in (func, scheduled):
        args = [rvm.nd.array(a) for a in arrays[:-1]] + [rvm.nd.empty(shapes[-1])]
        build(f.with_attr("global_symbol", "k"), target="c", name="k")["k"](*args)
        outs.append(args[-1].numpy())
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-4, atol=1e-4)
