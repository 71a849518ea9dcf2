"""Default schedules compute what the unscheduled kernels compute, on odd shapes: primes, 1,
widths no vector divides, symbolic dimensions (relax.build with and without them)."""
import numpy as np
import pytest

import rvm
from rvm import relax, tir
from rvm.dlight import CPUInfo
from rvm.relax.block_builder import BlockBuilder
from rvm.relax.expr import Var
from rvm.relax.struct_info import TensorStructInfo
from rvm.tir.function import PrimFunc

op = relax.op


def _module(shapes, body):
    bb = BlockBuilder()
    params = [Var(f"p{k}", TensorStructInfo(s, "float32")) for k, s in enumerate(shapes)]
    with bb.function("main", params):
        with bb.dataflow():
            out = bb.emit_output(bb.emit(body(*params)))
        bb.emit_func_output(out)
    return bb.get()


def _dense_relu(x, w, b):
    return op.nn.relu(op.add(op.matmul(x, w), b))


def _nt(x, w):
    return op.matmul(x, op.permute_dims(w))


def _layer_norm(x, g, b):
    return op.nn.layer_norm(x, g, b, axes=[-1])


def _conv(strides=1, padding=1, dilation=1, groups=1, layout="NCHW"):
    kernel = "OIHW" if layout == "NCHW" else "HWIO"
    return lambda x, w: op.nn.relu(op.nn.conv2d(x, w, strides, padding, dilation, groups,
                                                layout, kernel))


def _conv_bias_add(x, w, b, r):
    # a ResNet block's tail: conv, bias, the residual added, relu
    return op.nn.relu(op.add(op.add(op.nn.conv2d(x, w), b), r))


def _conv_batch_norm(x, w, scale, shift):
    # the CNN's tail: conv, a per-channel scale and shift (batch norm folded), relu
    return op.nn.relu(op.add(op.multiply(op.nn.conv2d(x, w, padding=1), scale), shift))


def _conv_pool(x, w):
    return op.nn.max_pool2d(_conv()(x, w), pool_size=3, strides=2, padding=1)


N = tir.Var("n", "int64")
# (name, body, parameter shapes with N symbolic, the value N takes)
CASES = [
    ("chain", lambda x, y: op.nn.relu(op.multiply(op.add(x, y), y)), [(N, 67), (N, 67)], 13),
    ("chain_wide", lambda x, y: op.add(x, y), [(3, 1031), (1, 1031)], None),
    ("softmax", lambda x: op.nn.softmax(x), [(N, 131)], 7),
    ("softmax_sym_axis", lambda x: op.nn.softmax(x), [(3, N)], 131),
    ("layer_norm", _layer_norm, [(N, 97), (97,), (97,)], 5),
    ("layer_norm_sym2", _layer_norm, [(N, N, 97), (97,), (97,)], 3),
    ("sum_rows", lambda x: op.sum(x, axis=[1]), [(257, 1009)], None),
    ("dense_relu_1", _dense_relu, [(1, 784), (784, 131), (131,)], None),
    ("dense_relu_10", _dense_relu, [(64, 128), (128, 10), (10,)], None),
    ("dense_odd", _dense_relu, [(7, 13), (13, 97), (97,)], None),
    ("dense_wide", _dense_relu, [(29, 256), (256, 160), (160,)], None),
    ("dense_sym", _dense_relu, [(N, 31), (31, 48), (48,)], 11),
    ("dense_sym_panels", _dense_relu, [(N, 37), (37, 160), (160,)], 11),
    # just above MATMUL_PARALLEL_MIN_WORK (2^21 multiply-adds), on threads: prime rows and
    # reduction with a predicated last panel; a symbolic row count (full tiles and a
    # remainder); an NT matmul of run-time operands (per-lane partial sums)
    ("dense_parallel", _dense_relu, [(97, 211), (211, 131), (131,)], None),
    ("dense_sym_parallel", _dense_relu, [(N, 131), (131, 256), (256,)], 37),
    ("nt_parallel", _nt, [(67, 96), (353, 96)], None),
    ("nt_matmul", _nt, [(17, 53), (19, 53)], None),
    ("nt_tiled", _nt, [(12, 48), (9, 48)], None),
    ("nt_sym", _nt, [(N, 64), (13, 64)], 3),
    ("nt_two_rows", _nt, [(2, 32), (5, 32)], None),
    ("batch_matmul", lambda a, b: op.matmul(a, b), [(3, 5, 37), (3, 37, 32)], None),
    ("conv_nchw", _conv(), [(1, 3, 13, 13), (5, 3, 3, 3)], None),
    ("conv_nchw_sym", _conv(), [(N, 3, 11, 17), (7, 3, 3, 3)], 2),
    ("conv_stride_dilation", _conv(2, 2, 2), [(2, 4, 23, 29), (6, 4, 3, 3)], None),
    ("conv_nhwc", _conv(layout="NHWC"), [(1, 11, 13, 3), (3, 3, 3, 19)], None),
    ("conv_grouped", _conv(groups=2), [(1, 6, 9, 31), (4, 3, 3, 3)], None),
    ("conv_depthwise", _conv(groups=5), [(2, 5, 17, 19), (5, 1, 3, 3)], None),
    ("conv_narrow", _conv(), [(1, 3, 5, 5), (4, 3, 3, 3)], None),
    ("conv_odd_channels", _conv(), [(2, 5, 9, 14), (3, 5, 3, 3)], None),
    ("conv_one_channel", _conv(), [(3, 1, 8, 28), (8, 1, 3, 3)], None),
    ("conv_7x7_stride2", _conv(2, 3), [(1, 3, 23, 16), (16, 3, 7, 7)], None),
    ("conv_wide_channels", _conv(), [(1, 7, 6, 6), (40, 7, 3, 3)], None),
    ("conv_sym_tiles", _conv(2, 1), [(N, 13, 11, 12), (24, 13, 3, 3)], 3),
    # output rows in parallel (3.1 million multiply-adds); the write-back over columns
    # (32 x 32 maps, 4 KB a channel)
    ("conv_parallel", _conv(), [(3, 8, 30, 30), (16, 8, 3, 3)], None),
    ("conv_column_store", _conv(), [(1, 3, 32, 32), (24, 3, 3, 3)], None),
    ("conv_bias_add", _conv_bias_add, [(2, 4, 10, 10), (6, 4, 1, 1), (1, 6, 1, 1),
                                       (2, 6, 10, 10)], None),
    # a batch-1 ResNet-sized conv on 8 x 8 (0.3 million multiply-adds: rows on threads),
    # 8-column write-backs with a residual at a symbolic batch, stride 3, a dilated
    # one-channel conv
    ("conv_small_parallel", _conv(), [(1, 16, 8, 8), (32, 16, 3, 3)], None),
    ("conv_residual_columns_sym", _conv_bias_add, [(N, 5, 16, 16), (24, 5, 1, 1),
                                                   (1, 24, 1, 1), (N, 24, 16, 16)], 3),
    ("conv_stride3", _conv(3, 1), [(2, 5, 11, 46), (16, 5, 3, 3)], None),
    ("conv_dilated_one_channel", _conv(1, 2, 2), [(2, 1, 20, 20), (8, 1, 3, 3)], None),
    ("conv_then_pool", _conv_pool, [(1, 2, 19, 19), (3, 2, 3, 3)], None),
    # write-backs of 12 and 14 columns (no whole vector of STORE_LANES: the columns
    # vectorized, the channels unrolled): 12 channels in one tile, 24 in two at stride 2,
    # a residual added at a symbolic batch
    ("conv_interleaved_store", _conv(), [(2, 3, 12, 12), (12, 3, 3, 3)], None),
    ("conv_interleaved_stride2", _conv(2, 1), [(1, 5, 28, 27), (24, 5, 3, 3)], None),
    ("conv_interleaved_residual_sym", _conv_bias_add, [(N, 3, 14, 14), (20, 3, 1, 1),
                                                       (1, 20, 1, 1), (N, 20, 14, 14)], 2),
    # per-channel epilogues computed on the accumulators' vectors of channels (one tile of
    # 12 channels, two of 10 at a symbolic batch on 16 columns, a one-channel input on 28)
    ("conv_channel_epilogue", _conv_batch_norm, [(2, 5, 9, 12), (12, 5, 3, 3), (1, 12, 1, 1),
                                                 (1, 12, 1, 1)], None),
    ("conv_channel_epilogue_sym", _conv_batch_norm, [(N, 3, 16, 16), (20, 3, 3, 3),
                                                     (1, 20, 1, 1), (1, 20, 1, 1)], 3),
    ("conv_channel_epilogue_one", _conv_batch_norm, [(2, 1, 28, 28), (8, 1, 3, 3),
                                                     (1, 8, 1, 1), (1, 8, 1, 1)], None),
    ("avg_pool", lambda x: op.nn.avg_pool2d(x, pool_size=2, strides=2), [(1, 3, 18, 22)],
     None),
    ("global_pool", lambda x: op.nn.adaptive_avg_pool2d(x, 1), [(N, 7, 9, 9)], 3),
    # pools whose output rows are POOL_MIN_WIDTH to MIN_WIDTH wide (the window rule's vector
    # of 7, 5 or 6 columns): a symbolic batch, padding with ceil_mode, an average without
    # the padding counted
    ("narrow_pool", lambda x: op.nn.max_pool2d(x, pool_size=2, strides=2),
     [(N, 5, 14, 15)], 3),
    ("ceil_pad_pool", lambda x: op.nn.max_pool2d(x, pool_size=3, strides=2, padding=1,
                                                 ceil_mode=True), [(2, 3, 13, 9)], None),
    ("avg_pad_pool", lambda x: op.nn.avg_pool2d(x, pool_size=3, strides=2, padding=1,
                                                count_include_pad=False), [(1, 2, 11, 11)],
     None),
    # reshapes: their indices divide by the (symbolic) extents, which Simplify folds
    ("reshape_gelu_sym", lambda x: op.nn.gelu_tanh(op.reshape(x, (-1, 12))), [(N, 5, 12)], 7),
    ("heads_sym", lambda x: op.reshape(op.permute_dims(x, [0, 2, 1, 3]), (-1, 52)),
     [(N, 4, 13, 8)], 3),
    ("heads_one", lambda x: op.reshape(op.permute_dims(x, [0, 2, 1, 3]), (-1, 52)),
     [(N, 4, 13, 8)], 1),
    ("reshape_static", lambda x: op.nn.relu(op.reshape(x, (3, 784))), [(3, 16, 7, 7)], None),
    ("merge_heads_sym", lambda x: op.reshape(op.permute_dims(x, [0, 2, 1, 3]), (-1, 13, 96)),
     [(N, 3, 13, 32)], 5),
    # the window rule on threads (POOL_PARALLEL_MIN_WORK, GROUPED_PARALLEL_MIN_WORK,
    # WINDOW_PARALLEL_MIN_WORK): a padded max pool and a depthwise conv at a symbolic batch
    # (estimated 64: above 2^24), a dense conv on a prime-wide map (above 2^20)
    ("pool_sym_parallel", lambda x: op.nn.max_pool2d(x, pool_size=3, strides=2, padding=1),
     [(N, 29, 63, 64)], 1),
    # the ResNet's 3 x 3 / 2 max pool at a static batch of 4 (0.15 million, above 2^17)
    ("pool_static_parallel", lambda x: op.nn.max_pool2d(x, pool_size=3, strides=2, padding=1),
     [(4, 16, 32, 31)], None),
    ("conv_depthwise_parallel", _conv(groups=29), [(N, 29, 33, 33), (29, 1, 3, 3)], 2),
    ("conv_prime_parallel", _conv(), [(3, 16, 17, 17), (23, 16, 3, 3)], None),
]

# The rule each case's one kernel gets (an NT matmul whose reduction no vector divides:
# the generic dot products).
EXPECTED_RULE = {name: "generic" for name, *_ in CASES}
EXPECTED_RULE.update({name: "matmul" for name, *_ in CASES
                      if name.startswith(("dense", "nt_")) or name == "batch_matmul"})
EXPECTED_RULE["nt_matmul"] = EXPECTED_RULE["nt_sym"] = "generic"  # odd k; rows unknown
# Convolutions and pooling: the window rule, but where the output is narrower than
# MIN_WIDTH (a 5-wide map, a global pool), which keeps the row reduction; a conv and the
# pool after it are two kernels.
EXPECTED_RULE.update({name: ["window"] for name, *_ in CASES
                      if name.startswith(("conv", "pool")) or name.endswith("pool")})
EXPECTED_RULE["global_pool"] = ["generic"]
EXPECTED_RULE["conv_then_pool"] = ["window", "window"]
# Dense NCHW convolutions whose output width has a divisor of MIN_ROWS or more: the conv
# rule (vectors of output channels); a prime-wide map (17, 19) stays with the window rule.
EXPECTED_RULE.update({name: ["conv"] for name in (
    "conv_nchw", "conv_stride_dilation", "conv_narrow", "conv_odd_channels", "conv_one_channel",
    "conv_7x7_stride2", "conv_wide_channels", "conv_sym_tiles", "conv_bias_add",
    "conv_parallel", "conv_column_store", "conv_small_parallel", "conv_residual_columns_sym",
    "conv_stride3", "conv_dilated_one_channel", "conv_interleaved_store",
    "conv_interleaved_stride2", "conv_interleaved_residual_sym", "conv_channel_epilogue",
    "conv_channel_epilogue_sym", "conv_channel_epilogue_one")})


def _concrete(shape, n):
    return tuple(n if isinstance(d, tir.Var) else d for d in shape)


@pytest.mark.parametrize("name,body,shapes,n", CASES, ids=[c[0] for c in CASES])
def test_default_schedules_match_the_unscheduled_kernels(name, body, shapes, n):
    mod = _module(shapes, body)
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(_concrete(s, n)).astype("float32") for s in shapes]
    from rvm.driver.relax_build import lower

    expected = EXPECTED_RULE[name]
    lowered = lower(mod)
    assert _rules(lowered) == (expected if isinstance(expected, list) else [expected])
    if name.endswith("_parallel") and CPUInfo.host().cores > 1:
        [kernel] = [f for gv, f in lowered.functions.items() if isinstance(f, PrimFunc)
                    and not gv.name_hint.startswith("shape_func")]
        assert "T.parallel" in kernel.script()
    results = {}
    for default in (False, True):
        ex = relax.build(mod, default_schedule=default)
        results[default] = relax.VirtualMachine(ex, rvm.cpu())["main"](*args).numpy()
    np.testing.assert_allclose(results[True], results[False], rtol=1e-4, atol=1e-4)


def _rules(lowered):
    """The rule that scheduled each kernel (shape functions left out), by kernel name."""
    return [f.get_attr("tir.is_scheduled") for gv, f in sorted(lowered.functions.items(),
                                                              key=lambda kv: kv[0].name_hint)
            if isinstance(f, PrimFunc) and not gv.name_hint.startswith("shape_func")]


def test_the_pipeline_schedules_every_kernel_and_the_option_turns_it_off():
    from rvm.driver.relax_build import lower

    mod = _module([(64, 128), (128, 10), (10,)], _dense_relu)
    assert _rules(lower(mod)) == ["matmul"]
    assert _rules(lower(mod, default_schedule=False)) == [None]


def test_default_schedule_false_with_a_pass_as_pipeline_is_refused():
    mod = _module([(4, 4)], lambda x: op.add(x, x))
    with pytest.raises(ValueError, match="default_schedule=False applies to a named pipeline"):
        relax.build(mod, pipeline=relax.transform.default_build_pipeline(),
                    default_schedule=False)


def test_an_exported_default_build_reloads_from_its_tir_and_computes_the_same(tmp_path):
    # parallel tiles (512 x 131 x 256 > 2^24 iterations), a predicated last tile (131 columns):
    # the loader regenerates both kernels from the stored TIR with its own bounds checks
    mod = _module([(512, 256), (256, 131), (131,)], _dense_relu)
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(s).astype("float32") for s in ((512, 256), (256, 131), (131,))]
    ex = relax.build(mod)
    assert "omp parallel" in ex.kernel_libs[0].source
    path = tmp_path / "dense.rvm"
    ex.export_library(str(path))
    loaded = rvm.runtime.load_module(str(path))
    out = relax.VirtualMachine(loaded, rvm.cpu())["main"](*args).numpy()
    naive = relax.VirtualMachine(relax.build(mod, default_schedule=False), rvm.cpu())["main"]
    np.testing.assert_allclose(out, naive(*args).numpy(), rtol=1e-4, atol=1e-4)


# (rows of x, weight shape, packed shape): weights bound as constants, which the matmul rule
# packs into panels at build where two or more panels of a width dividing the columns fit
# (1 row, primes, symbolic rows, a batch of weights; one panel or a width no vector
# divides: left as they are; fewer columns than one vector: padded to it, Schedule.pad_columns).
BOUND = [
    ("one_row", (1, 784), (784, 128), (2, 784, 64)),
    ("prime_rows", (13, 37), (37, 96), (2, 37, 48)),
    ("sym_rows", (N, 31), (31, 128), (2, 31, 64)),
    ("batched", (3, 5, 37), (3, 37, 96), (3, 2, 37, 48)),
    ("ten_wide", (7, 128), (128, 10), (128, 16)),  # fewer columns than a vector: padded
    ("odd_wide", (5, 16), (16, 131), None),
    # NT (x @ w.T, a linear layer's weight): packed transposed, one panel too
    ("nt_one_row", (1, 784), ("T", 128, 784), (2, 784, 64)),
    ("nt_ten_wide", (64, 128), ("T", 10, 128), (128, 16)),
    ("nt_primes", (13, 37), ("T", 29, 37), (1, 37, 29)),
    ("nt_odd_wide", (3, 8), ("T", 131, 8), None),
]


@pytest.mark.parametrize("name,xshape,wshape,packed", BOUND, ids=[b[0] for b in BOUND])
def test_bound_weights_are_packed_at_build_and_compute_the_same(name, xshape, wshape, packed):
    rng = np.random.default_rng(4)
    nt = wshape[0] == "T"
    wshape = wshape[1:] if nt else wshape
    w = rng.standard_normal(wshape).astype("float32")
    x = rng.standard_normal(_concrete(xshape, 3)).astype("float32")
    bb = BlockBuilder()
    xv = Var("x", TensorStructInfo(xshape, "float32"))
    with bb.function("main", [xv]):
        with bb.dataflow():
            weight = op.permute_dims(relax.const(w)) if nt else relax.const(w)
            out = bb.emit_output(bb.emit(op.nn.relu(op.matmul(xv, weight))))
        bb.emit_func_output(out)
    mod = bb.get()
    ex = relax.build(mod)
    shapes = [tuple(c.shape) for c in ex.constants if hasattr(c, "numpy")]
    assert shapes == [packed or wshape]
    got = relax.VirtualMachine(ex, rvm.cpu())["main"](x).numpy()
    naive = relax.VirtualMachine(relax.build(mod, default_schedule=False), rvm.cpu())["main"]
    np.testing.assert_allclose(got, naive(x).numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got, np.maximum(x @ (w.T if nt else w), 0), rtol=1e-4,
                               atol=1e-4)


def test_a_run_time_weight_read_by_many_rows_is_packed_inside_the_kernel():
    # 67 rows (a prime above PACK_MIN_ROWS): one-row tiles over two 48-wide panels packed per
    # call
    mod = _module([(67, 45), (45, 96)], lambda x, w: op.matmul(x, w))
    from rvm.driver.relax_build import lower

    [kernel] = [f for gv, f in lower(mod).functions.items()
                if isinstance(f, PrimFunc) and not gv.name_hint.startswith("shape_func")]
    assert "meta_schedule.layout_rewrite_preproc" in kernel.script()
    rng = np.random.default_rng(5)
    args = [rng.standard_normal(s).astype("float32") for s in ((67, 45), (45, 96))]
    got = relax.VirtualMachine(relax.build(mod), rvm.cpu())["main"](*args).numpy()
    np.testing.assert_allclose(got, args[0] @ args[1], rtol=1e-4, atol=1e-4)
