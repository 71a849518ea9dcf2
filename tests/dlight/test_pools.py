"""The window rule's pools and padded copies: which order a pool takes (rvm/dlight/cpu/pool.py),
when a padded copy runs on threads (PAD_PARALLEL_MIN_WORK), and pools of odd shapes computing
what the unscheduled kernels compute."""
import numpy as np
import pytest

import rvm
from rvm import relax, tir
from rvm.dlight import CPUInfo, RULES, schedule_func
from rvm.dlight.analysis import PAD_PARALLEL_MIN_WORK
from rvm.driver.relax_build import lower
from rvm.relax.block_builder import BlockBuilder
from rvm.relax.expr import Var
from rvm.relax.struct_info import TensorStructInfo
from rvm.tir.function import PrimFunc

op = relax.op
INFO = CPUInfo(vector_bytes=64, cores=2)
N = tir.Var("n", "int64")


def _module(shape, body):
    bb = BlockBuilder()
    x = Var("x", TensorStructInfo(shape, "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(bb.emit(body(x)))
        bb.emit_func_output(out)
    return bb.get()


def _kernel(mod, info=None):
    """The one kernel of ``mod`` after legalization, scheduled by the default rules."""
    with_rules = lower(mod, default_schedule=False)
    [func] = [f for gv, f in with_rules.functions.items()
              if isinstance(f, PrimFunc) and not gv.name_hint.startswith("shape_func")]
    return schedule_func(func, RULES, info or INFO)


def _max(kernel, stride, padding=0, dilation=1, ceil_mode=False):
    return lambda x: op.nn.max_pool2d(x, kernel, stride, padding, dilation, ceil_mode)


def _avg(kernel, stride, padding=0, ceil_mode=False, count_include_pad=False):
    return lambda x: op.nn.avg_pool2d(x, kernel, stride, padding, 1, ceil_mode,
                                      count_include_pad)


def _order(text):
    """The pool's order (rvm/dlight/cpu/pool.py): "usual" (a vector loop inside the window
    loops), "inside" (the window inside the vector loop, a row of accumulators) or "tiling"
    (the window inside the vector loop, accumulating in the output)."""
    lines = text.splitlines()
    window = next(k for k, line in enumerate(lines) if "for ry, rx in" in line)
    if "T.vectorized(" in lines[window + 1]:
        return "usual"
    return "inside" if "_local" in text else "tiling"


@pytest.mark.parametrize("body,shape,order", [
    (_max(2, 2), (2, 3, 28, 28), "tiling"),                  # the CNN's pools
    (_max(3, 3), (1, 2, 30, 33), "tiling"),
    (_max((2, 3), (2, 3)), (1, 2, 8, 30), "tiling"),         # the window's width is what counts
    (_max(2, 2, 1, ceil_mode=True), (1, 2, 9, 27), "tiling"),  # a padded copy in front
    (_max(2, 2), (1, 2, 32, 32), "tiling"),                  # whole vectors: tiling still
    # windows that do not tile the row: inside the vector when its columns (18, 10, 14) are
    # not whole half-vectors of 8 (AVX-512), else the usual order (8, 16, 32 columns)
    (_max(2, 1), (1, 2, 9, 19), "inside"),                   # stride 1
    (_max(2, 4, dilation=2), (1, 2, 9, 40), "inside"),       # dilated: gaps between taps
    (_max(2, (2, 3)), (1, 2, 8, 30), "inside"),              # stride 3 over a 2-wide window
    (_avg(2, 2), (2, 3, 28, 28), "inside"),                  # the sum has an epilogue
    (_max(3, 2, 1), (1, 16, 32, 32), "usual"),               # the ResNet's
    (_max(3, 2, 1), (1, 4, 16, 16), "usual"),
    (_max(3, 1, 1), (1, 2, 16, 16), "usual"),
    (_avg(2, 2), (1, 2, 32, 64), "usual"),
])
def test_a_pool_puts_its_window_inside_the_vector_where_that_measured_faster(body, shape, order):
    func = _kernel(_module(shape, body))
    assert func.get_attr("tir.is_scheduled") == "window"
    assert _order(func.script()) == order


def _pad_parallel(text):
    return [line.strip() for line in text.splitlines()
            if "T.parallel(" in line and "_fused" not in line]


def test_a_padded_copy_runs_on_threads_from_its_threshold():
    # 3 x 3 / 2 max pools padded by 1: the copy is (n, c, 33, 33); at 2^17 elements and
    # above its outermost loop longer than 1 runs on threads, below it and on one core not
    def pool(batch, channels):
        return _module((batch, channels, 32, 32), _max(3, 2, 1))

    big = _kernel(pool(8, 16))                   # 139 392 elements
    assert 8 * 16 * 33 * 33 >= PAD_PARALLEL_MIN_WORK
    assert _pad_parallel(big.script()) == ["for i0 in T.parallel(T.int64(8)):"]
    one = _kernel(pool(1, 128))                  # a batch of 1: threads over the channels
    assert _pad_parallel(one.script()) == ["for i1 in T.parallel(T.int64(128)):"]
    small = _kernel(pool(7, 16))                 # 121 968 elements
    assert 7 * 16 * 33 * 33 < PAD_PARALLEL_MIN_WORK
    assert _pad_parallel(small.script()) == []
    assert _pad_parallel(_kernel(pool(8, 16), CPUInfo(vector_bytes=64, cores=1)).script()) \
        == []
    # a symbolic batch counts as SYMBOLIC_EXTENT (64) images: threads over the batch
    sym = _kernel(_module((N, 16, 32, 32), _max(3, 2, 1)))
    assert _pad_parallel(sym.script()) == ["for i0 in T.parallel(n):"]


def test_a_padded_conv_input_runs_on_threads_from_the_same_threshold():
    # the conv rule pads its input with the same schedule_pad
    bb = BlockBuilder()
    x = Var("x", TensorStructInfo((12, 3, 64, 64), "float32"))
    w = Var("w", TensorStructInfo((16, 3, 7, 7), "float32"))
    with bb.function("main", [x, w]):
        with bb.dataflow():
            out = bb.emit_output(bb.emit(op.nn.conv2d(x, w, 2, 3)))
        bb.emit_func_output(out)
    func = _kernel(bb.get())
    assert func.get_attr("tir.is_scheduled") == "conv"
    # 12 x 3 x 70 x 70 elements
    assert _pad_parallel(func.script()) == ["for i0 in T.parallel(T.int64(12)):"]


# (name, body, input shape with N symbolic, the value N takes, the pool's order, or "generic"
# (narrower than POOL_MIN_WIDTH)): strides 1 to 4, padding 0, 1 and 2, ceil_mode, dilation,
# windows of 2 to 4, prime widths, a 1 x 1 output, max and average with and without the
# padding counted
CASES = [
    ("max_2x2_s2_prime", _max(2, 2), (N, 3, 13, 29), 3, "tiling"),
    ("max_3x3_s3_pad1", _max(3, 3, 1), (2, 3, 17, 23), None, "tiling"),
    ("max_4x4_s4_pad2", _max(4, 4, 2), (1, 2, 13, 61), None, "tiling"),
    ("max_2x2_s2_ceil", _max(2, 2, ceil_mode=True), (2, 3, 9, 19), None, "tiling"),
    ("max_tiling_wide", _max(2, 2), (1, 2, 6, 74), None, "tiling"),  # 37 columns
    ("max_3x3_s2_pad1", _max(3, 2, 1), (N, 5, 31, 31), 2, "usual"),
    ("max_3x3_s1_pad1", _max(3, 1, 1), (1, 2, 11, 13), None, "inside"),
    ("max_3x3_s2_ceil_pad1", _max(3, 2, 1, ceil_mode=True), (1, 2, 10, 37), None, "inside"),
    ("max_dilated", _max(2, 2, 1, dilation=2), (1, 3, 15, 23), None, "inside"),
    ("max_1x1_out", _max(3, 3), (N, 4, 3, 3), 5, "generic"),
    ("avg_2x2_s2", _avg(2, 2), (N, 3, 14, 22), 2, "inside"),
    ("avg_3x3_s2_pad1_count", _avg(3, 2, 1, count_include_pad=True), (2, 3, 13, 17), None,
     "inside"),
    ("avg_4x4_s3_pad2_ceil", _avg(4, 3, 2, ceil_mode=True), (1, 2, 11, 29), None, "inside"),
    ("avg_3x3_s2_pad1_sym", _avg(3, 2, 1), (N, 2, 32, 31), 3, "usual"),
]


@pytest.mark.parametrize("name,body,shape,n,order", CASES, ids=[c[0] for c in CASES])
def test_pools_compute_what_the_unscheduled_kernels_compute(name, body, shape, n, order):
    mod = _module(shape, body)
    func = _kernel(mod)
    assert func.get_attr("tir.is_scheduled") == ("generic" if order == "generic" else "window")
    if order != "generic":
        assert _order(func.script()) == order
    concrete = tuple(n if isinstance(d, tir.Var) else d for d in shape)
    x = np.random.default_rng(7).standard_normal(concrete).astype("float32")
    results = {}
    for default in (False, True):
        ex = relax.build(mod, default_schedule=default)
        results[default] = relax.VirtualMachine(ex, rvm.cpu())["main"](x).numpy()
    np.testing.assert_allclose(results[True], results[False], rtol=1e-5, atol=1e-6)
