"""The window rule (convolutions, pooling), Before/After in script form on representative
shapes (2 cores, AVX-512: 16 float32 lanes)."""
import pytest

from rvm.dlight import CPUInfo, RULES, schedule_func
from rvm.dlight.analysis import (
    GROUPED_PARALLEL_MIN_WORK, PARALLEL_MIN_WORK, POOL_PARALLEL_MIN_WORK,
    WINDOW_PARALLEL_MIN_WORK,
)
from rvm.dlight.cpu import Generic, Window
from rvm.dlight.cpu.conv import POOL_MIN_WIDTH
from rvm.ir.base import assert_structural_equal
from rvm.script import ir as I
from rvm.script import tir as T

INFO = CPUInfo(vector_bytes=64, cores=2)


def _scheduled(mod, info=INFO, rules=RULES):
    return schedule_func(mod["main"], rules, info)


@I.ir_module
class Conv:
    @T.prim_func
    def main(x: T.Buffer((1, 16, 32, 32), "float32"), w: T.Buffer((32, 16, 3, 3), "float32"),
             y: T.Buffer((1, 32, 32, 32), "float32")):
        pad = T.alloc_buffer((1, 16, 34, 34))
        conv = T.alloc_buffer((1, 32, 32, 32))
        for n, c, h, v in T.grid(1, 16, 34, 34):
            with T.block("pad"):
                vn, vc, vh, vw = T.axis.remap("SSSS", [n, c, h, v])
                pad[vn, vc, vh, vw] = T.if_then_else(
                    1 <= vh and vh < 33 and 1 <= vw and vw < 33, x[vn, vc, vh - 1, vw - 1],
                    T.float32(0))
        for n, f, h, v, rc, ry, rx in T.grid(1, 32, 32, 32, 16, 3, 3):
            with T.block("conv"):
                vn, vf, vh, vw, vc, vy, vx = T.axis.remap("SSSSRRR", [n, f, h, v, rc, ry, rx])
                with T.init():
                    conv[vn, vf, vh, vw] = T.float32(0)
                conv[vn, vf, vh, vw] = conv[vn, vf, vh, vw] \
                    + pad[vn, vc, vh + vy, vw + vx] * w[vf, vc, vy, vx]
        for n, f, h, v in T.grid(1, 32, 32, 32):
            with T.block("y"):
                vn, vf, vh, vw = T.axis.remap("SSSS", [n, f, h, v])
                y[vn, vf, vh, vw] = T.max(conv[vn, vf, vh, vw], T.float32(0))

@I.ir_module
class Pool:
    # a 3 x 3 window at stride 2: neighbouring windows overlap by a column
    @T.prim_func
    def main(x: T.Buffer((1, 8, 33, 33), "float32"), y: T.Buffer((1, 8, 16, 16), "float32")):
        for n, c, h, v, ry, rx in T.grid(1, 8, 16, 16, 3, 3):
            with T.block("pool"):
                vn, vc, vh, vw, vy, vx = T.axis.remap("SSSSRR", [n, c, h, v, ry, rx])
                with T.init():
                    y[vn, vc, vh, vw] = T.float32(-3.4e38)
                y[vn, vc, vh, vw] = T.max(y[vn, vc, vh, vw], x[vn, vc, vh * 2 + vy, vw * 2 + vx])


@I.ir_module
class TilingPool:
    # a 2 x 2 window at stride 2: windows side by side along the row
    @T.prim_func
    def main(x: T.Buffer((1, 8, 32, 32), "float32"), y: T.Buffer((1, 8, 16, 16), "float32")):
        for n, c, h, v, ry, rx in T.grid(1, 8, 16, 16, 2, 2):
            with T.block("pool"):
                vn, vc, vh, vw, vy, vx = T.axis.remap("SSSSRR", [n, c, h, v, ry, rx])
                with T.init():
                    y[vn, vc, vh, vw] = T.float32(-3.4e38)
                y[vn, vc, vh, vw] = T.max(y[vn, vc, vh, vw], x[vn, vc, vh * 2 + vy, vw * 2 + vx])


def test_an_overlapping_pooling_window_runs_outside_a_vector_of_output_columns():
    @T.prim_func
    def expected(x: T.Buffer((1, 8, 33, 33), "float32"), y: T.Buffer((1, 8, 16, 16), "float32")):
        T.func_attr({"tir.is_scheduled": "window"})
        y_local = T.alloc_buffer((1, 8, 16, 16), scope="local")
        for n_c_fused, h, v_0 in T.grid(8, 16, 1):
            for v_1_init in T.vectorized(16):
                with T.block("pool_init"):
                    vn = T.axis.spatial(1, 0)
                    vc, vh = T.axis.remap("SS", [n_c_fused, h])
                    vw = T.axis.spatial(16, v_0 * 16 + v_1_init)
                    T.reads()
                    T.writes(y_local[vn, vc, vh, vw])
                    y_local[vn, vc, vh, vw] = T.float32(-3.4e+38)
            for ry, rx in T.grid(3, 3):
                for v_1 in T.vectorized(16):
                    with T.block("pool_update"):
                        vn = T.axis.spatial(1, 0)
                        vc, vh = T.axis.remap("SS", [n_c_fused, h])
                        vw = T.axis.spatial(16, v_0 * 16 + v_1)
                        vy, vx = T.axis.remap("RR", [ry, rx])
                        T.reads(y_local[vn, vc, vh, vw], x[vn, vc, vh * 2 + vy, vw * 2 + vx])
                        T.writes(y_local[vn, vc, vh, vw])
                        y_local[vn, vc, vh, vw] = T.max(y_local[vn, vc, vh, vw],
                                                        x[vn, vc, vh * 2 + vy, vw * 2 + vx])
            for ax0 in T.vectorized(16):
                with T.block("y_local"):
                    v0 = T.axis.spatial(1, 0)
                    v1, v2 = T.axis.remap("SS", [n_c_fused, h])
                    v3 = T.axis.spatial(16, v_0 * 16 + ax0)
                    T.reads(y_local[v0, v1, v2, v3])
                    T.writes(y[v0, v1, v2, v3])
                    y[v0, v1, v2, v3] = y_local[v0, v1, v2, v3]

    assert_structural_equal(_scheduled(Pool), expected.with_attr("global_symbol", "main"))


def test_a_window_tiling_its_row_runs_inside_the_vector_and_accumulates_in_the_output():
    # stride 2 = window width: the window's taps inside the vector of columns, one interleaved
    # group of loads per window row (rvm/dlight/cpu/pool.py), no accumulator copy
    @T.prim_func
    def expected(x: T.Buffer((1, 8, 32, 32), "float32"), y: T.Buffer((1, 8, 16, 16), "float32")):
        T.func_attr({"tir.is_scheduled": "window"})
        for n_c_fused, h, v_0 in T.grid(8, 16, 1):
            for v_1 in T.vectorized(16):
                with T.block("pool_init"):
                    vn = T.axis.spatial(1, 0)
                    vc, vh = T.axis.remap("SS", [n_c_fused, h])
                    vw = T.axis.spatial(16, v_0 * 16 + v_1)
                    T.reads()
                    T.writes(y[vn, vc, vh, vw])
                    y[vn, vc, vh, vw] = T.float32(-3.4e+38)
                for ry, rx in T.grid(2, 2):
                    with T.block("pool_update"):
                        vn = T.axis.spatial(1, 0)
                        vc, vh = T.axis.remap("SS", [n_c_fused, h])
                        vw = T.axis.spatial(16, v_0 * 16 + v_1)
                        vy, vx = T.axis.remap("RR", [ry, rx])
                        T.reads(y[vn, vc, vh, vw], x[vn, vc, vh * 2 + vy, vw * 2 + vx])
                        T.writes(y[vn, vc, vh, vw])
                        y[vn, vc, vh, vw] = T.max(y[vn, vc, vh, vw],
                                                  x[vn, vc, vh * 2 + vy, vw * 2 + vx])

    assert_structural_equal(_scheduled(TilingPool), expected.with_attr("global_symbol", "main"))


@I.ir_module
class NarrowRowPool:
    # a 3 x 3 window at stride 1 over 20 output columns (not whole half-vectors)
    @T.prim_func
    def main(x: T.Buffer((1, 8, 22, 22), "float32"), y: T.Buffer((1, 8, 20, 20), "float32")):
        for n, c, h, v, ry, rx in T.grid(1, 8, 20, 20, 3, 3):
            with T.block("pool"):
                vn, vc, vh, vw, vy, vx = T.axis.remap("SSSSRR", [n, c, h, v, ry, rx])
                with T.init():
                    y[vn, vc, vh, vw] = T.float32(-3.4e38)
                y[vn, vc, vh, vw] = T.max(y[vn, vc, vh, vw], x[vn, vc, vh + vy, vw + vx])


def test_a_pool_row_of_partial_vectors_runs_its_window_inside_the_vector():
    # 20 columns: the window inside the vector loop, one accumulator per lane, so the row's
    # tail is vectorized once rather than once per tap (rvm/dlight/cpu/pool.py)
    @T.prim_func
    def expected(x: T.Buffer((1, 8, 22, 22), "float32"), y: T.Buffer((1, 8, 20, 20), "float32")):
        T.func_attr({"tir.is_scheduled": "window"})
        y_local = T.alloc_buffer((1, 8, 20, 20), scope="local")
        for n_c_fused, h, v_0 in T.grid(8, 20, 1):
            for v_1 in T.vectorized(20):
                with T.block("pool_init"):
                    vn = T.axis.spatial(1, 0)
                    vc, vh = T.axis.remap("SS", [n_c_fused, h])
                    vw = T.axis.spatial(20, v_0 * 20 + v_1)
                    T.reads()
                    T.writes(y_local[vn, vc, vh, vw])
                    y_local[vn, vc, vh, vw] = T.float32(-3.4e+38)
                for ry, rx in T.grid(3, 3):
                    with T.block("pool_update"):
                        vn = T.axis.spatial(1, 0)
                        vc, vh = T.axis.remap("SS", [n_c_fused, h])
                        vw = T.axis.spatial(20, v_0 * 20 + v_1)
                        vy, vx = T.axis.remap("RR", [ry, rx])
                        T.reads(y_local[vn, vc, vh, vw], x[vn, vc, vh + vy, vw + vx])
                        T.writes(y_local[vn, vc, vh, vw])
                        y_local[vn, vc, vh, vw] = T.max(y_local[vn, vc, vh, vw],
                                                        x[vn, vc, vh + vy, vw + vx])
            for ax0 in T.vectorized(20):
                with T.block("y_local"):
                    v0 = T.axis.spatial(1, 0)
                    v1, v2 = T.axis.remap("SS", [n_c_fused, h])
                    v3 = T.axis.spatial(20, v_0 * 20 + ax0)
                    T.reads(y_local[v0, v1, v2, v3])
                    T.writes(y[v0, v1, v2, v3])
                    y[v0, v1, v2, v3] = y_local[v0, v1, v2, v3]

    assert_structural_equal(_scheduled(NarrowRowPool),
                            expected.with_attr("global_symbol", "main"))


def test_an_nhwc_conv_shares_the_weight_vector_across_output_pixels():
    # NHWC: the vector runs over output channels (the weight's contiguous axis), the
    # unrolled rows over output pixels, each a broadcast of one input element
    @T.prim_func
    def nhwc(x: T.Buffer((1, 8, 8, 4), "float32"), w: T.Buffer((3, 3, 4, 32), "float32"),
             y: T.Buffer((1, 6, 6, 32), "float32")):
        for n, h, v, f, ry, rx, rc in T.grid(1, 6, 6, 32, 3, 3, 4):
            with T.block("conv"):
                vn, vh, vw, vf, vy, vx, vc = T.axis.remap("SSSSRRR", [n, h, v, f, ry, rx, rc])
                with T.init():
                    y[vn, vh, vw, vf] = T.float32(0)
                y[vn, vh, vw, vf] = y[vn, vh, vw, vf] \
                    + x[vn, vh + vy, vw + vx, vc] * w[vy, vx, vc, vf]

    text = schedule_func(nhwc, RULES, INFO).script()
    assert "for ry, rx, rc in T.grid(3, 3, 4):" in text
    assert "for f_1 in T.vectorized(32):" in text and "for v_1 in T.unroll(6):" in text


def test_an_output_narrower_than_min_width_keeps_the_row_reduction():
    # a 4-wide output row would leave most of a vector idle: the generic rule's row reduction
    @T.prim_func
    def narrow(x: T.Buffer((1, 2, 6, 6), "float32"), w: T.Buffer((3, 2, 3, 3), "float32"),
               y: T.Buffer((1, 3, 4, 4), "float32")):
        for n, f, h, v, rc, ry, rx in T.grid(1, 3, 4, 4, 2, 3, 3):
            with T.block("conv"):
                vn, vf, vh, vw, vc, vy, vx = T.axis.remap("SSSSRRR", [n, f, h, v, rc, ry, rx])
                with T.init():
                    y[vn, vf, vh, vw] = T.float32(0)
                y[vn, vf, vh, vw] = y[vn, vf, vh, vw] \
                    + x[vn, vc, vh + vy, vw + vx] * w[vf, vc, vy, vx]

    assert schedule_func(narrow, [Window(), Generic()], INFO).get_attr("tir.is_scheduled") \
        == "generic"


def test_a_pool_as_narrow_as_pool_min_width_gets_a_vector_of_columns():
    # a pool has no row loop to share a load across: its 7-wide output rows are one masked
    # vector, not a row reduction per output; a 3-wide one stays with the generic rule
    def pool(width):
        @T.prim_func
        def func(x: T.Buffer((2, 3, 8, width * 2), "float32"),
                 y: T.Buffer((2, 3, 4, width), "float32")):
            for n, c, h, v, ry, rx in T.grid(2, 3, 4, width, 2, 2):
                with T.block("pool"):
                    vn, vc, vh, vw, vy, vx = T.axis.remap("SSSSRR", [n, c, h, v, ry, rx])
                    with T.init():
                        y[vn, vc, vh, vw] = T.float32(-3.4e38)
                    y[vn, vc, vh, vw] = T.max(y[vn, vc, vh, vw],
                                              x[vn, vc, vh * 2 + vy, vw * 2 + vx])
        return func

    rules = [Window(), Generic()]
    assert POOL_MIN_WIDTH == 4
    wide = schedule_func(pool(7), rules, INFO)
    assert wide.get_attr("tir.is_scheduled") == "window"
    assert "T.vectorized(7)" in wide.script()
    assert schedule_func(pool(3), rules, INFO).get_attr("tir.is_scheduled") == "generic"


def _pool_func(batch, channels, size):
    from rvm.te.create_prim_func import create_prim_func
    from rvm.te.operation import placeholder
    from rvm.topi.nn.pooling import pool2d

    x = placeholder((batch, channels, size, size), name="x")
    return create_prim_func([x, pool2d(x, (2, 2), (2, 2), (1, 1), (0, 0, 0, 0), "max")])


def _depthwise_func(batch, channels, size):
    from rvm.te.create_prim_func import create_prim_func
    from rvm.te.operation import placeholder
    from rvm.topi.nn import group_conv2d_nchw

    x = placeholder((batch, channels, size, size), name="x")
    w = placeholder((channels, 1, 3, 3), name="w")
    return create_prim_func([x, w, group_conv2d_nchw(x, w, 1, 1, 1, channels)])


def _grouped_func(batch, channels, size, groups=8):
    from rvm.te.create_prim_func import create_prim_func
    from rvm.te.operation import placeholder
    from rvm.topi.nn import group_conv2d_nchw

    x = placeholder((batch, channels, size, size), name="x")
    w = placeholder((channels, channels // groups, 3, 3), name="w")
    return create_prim_func([x, w, group_conv2d_nchw(x, w, 1, 1, 1, groups)])


def _prime_conv_func(batch, filters, size):
    from rvm.te.create_prim_func import create_prim_func
    from rvm.te.operation import placeholder
    from rvm.topi.nn import conv2d_nchw

    x = placeholder((batch, 16, size, size), name="x")
    w = placeholder((filters, 16, 3, 3), name="w")
    return create_prim_func([x, w, conv2d_nchw(x, w, 1, 1, 1)])


@pytest.mark.parametrize("make,args,work,threshold", [
    # a 2 x 2 max pool: 4 iterations per output
    (_pool_func, (1, 8, 128), 8 * 64 * 64 * 4, POOL_PARALLEL_MIN_WORK),            # 2^17
    (_pool_func, (1, 8, 126), 8 * 63 * 63 * 4, POOL_PARALLEL_MIN_WORK),            # below
    (_pool_func, (64, 16, 14), 64 * 16 * 7 * 7 * 4, POOL_PARALLEL_MIN_WORK),       # the CNN's
    (_pool_func, (1, 16, 14), 16 * 7 * 7 * 4, POOL_PARALLEL_MIN_WORK),             # at batch 1
    # a depthwise 3 x 3 conv: no operand is read along the columns but the input, so no
    # row of the tile shares a vector load (rows 1), and its parallel form costs more CPU
    # than its serial one: the general threshold
    (_depthwise_func, (16, 64, 43), 16 * 64 * 43 * 43 * 9, GROUPED_PARALLEL_MIN_WORK),
    (_depthwise_func, (16, 64, 42), 16 * 64 * 42 * 42 * 9, GROUPED_PARALLEL_MIN_WORK),
    (_depthwise_func, (1, 64, 42), 64 * 42 * 42 * 9, GROUPED_PARALLEL_MIN_WORK),
    (_grouped_func, (8, 64, 16), 8 * 64 * 16 * 16 * 8 * 9, GROUPED_PARALLEL_MIN_WORK),
    # a dense conv on a prime-wide map (the conv rule leaves it): a tile of output channels
    (_prime_conv_func, (1, 26, 17), 26 * 17 * 17 * 16 * 9, WINDOW_PARALLEL_MIN_WORK),
    (_prime_conv_func, (1, 25, 17), 25 * 17 * 17 * 16 * 9, WINDOW_PARALLEL_MIN_WORK),
])
def test_the_window_rule_runs_on_threads_from_its_threshold(make, args, work, threshold):
    func = schedule_func(make(*args), RULES, INFO)
    assert func.get_attr("tir.is_scheduled") == "window"
    # the window's outer loops (fused); a padded input has its own threshold (test_pads_...)
    assert ("_fused in T.parallel(" in func.script()) == (work >= threshold)
    one_core = schedule_func(make(*args), RULES, CPUInfo(vector_bytes=64, cores=1))
    assert "T.parallel(" not in one_core.script()


def test_depthwise_and_grouped_convs_wait_for_the_general_threshold_pools_do_not():
    # a grouped conv's parallel form costs more CPU than its serial one (analysis.py); a
    # pool's and the channel tiles' do not
    assert POOL_PARALLEL_MIN_WORK < WINDOW_PARALLEL_MIN_WORK < GROUPED_PARALLEL_MIN_WORK
    assert GROUPED_PARALLEL_MIN_WORK == PARALLEL_MIN_WORK
