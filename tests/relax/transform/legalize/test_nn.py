"""Neural-network operators: legalization, script round trips, and numbers from the c and
python targets against the numpy definitions of nn_reference."""
import math

import numpy as np

from rvm.relax import op as O
from tests.relax.transform.legalize import nn_reference as ref
from tests.relax.transform.legalize.harness import (
    Case, check_legalized, check_numeric, numbered, uniform,
)

F = "float32"
NN = O.nn
_erf = np.vectorize(math.erf)
_positive = uniform(0.5, 1.5)


def _nchw(x):
    return x.transpose(0, 3, 1, 2)


def _nhwc(x):
    return x.transpose(0, 2, 3, 1)


CASES = numbered([
    Case("relu", NN.relu, [((2, 3), F)], lambda a: np.maximum(a, 0)),
    Case("gelu", NN.gelu, [((2, 3), F)], lambda a: (0.5 * a * (1 + _erf(a / math.sqrt(2))))
         .astype(F)),
    Case("gelu_tanh", NN.gelu_tanh, [((2, 3), F)], lambda a: (0.5 * a * (1 + np.tanh(
        math.sqrt(2 / math.pi) * (a + 0.044715 * a ** 3)))).astype(F)),
    Case("silu", NN.silu, [((2, 3), F)], lambda a: a / (1 + np.exp(-a))),
    Case("leakyrelu", lambda x: NN.leakyrelu(x, 0.2), [((2, 3), F)],
         lambda a: np.where(a > 0, a, 0.2 * a)),
    Case("softmax", lambda x: NN.softmax(x, axis=0), [((3, 4), F)],
         lambda a: np.exp(a) / np.exp(a).sum(axis=0, keepdims=True)),
    Case("log_softmax", NN.log_softmax, [(("n", 5), F)],
         lambda a: a - np.log(np.exp(a).sum(axis=-1, keepdims=True)), sizes={"n": 2}),
    Case("dropout", NN.dropout, [((2, 3), F)], lambda a: (a, np.ones_like(a))),
    Case("conv2d", lambda x, w: NN.conv2d(x, w), [((2, 3, 6, 7), F), ((4, 3, 3, 2), F)],
         ref.conv2d, rtol=1e-4),
    Case("conv2d_strided_padded", lambda x, w: NN.conv2d(x, w, strides=2, padding=(1, 2, 0, 1),
                                                         dilation=(2, 1)),
         [((1, 2, 9, 8), F), ((3, 2, 3, 3), F)],
         lambda x, w: ref.conv2d(x, w, (2, 2), (1, 2, 0, 1), (2, 1)), rtol=1e-4),
    Case("conv2d_groups", lambda x, w: NN.conv2d(x, w, padding=1, groups=2),
         [((1, 4, 5, 5), F), ((6, 2, 3, 3), F)],
         lambda x, w: ref.conv2d(x, w, padding=(1, 1, 1, 1), groups=2), rtol=1e-4),
    Case("conv2d_depthwise", lambda x, w: NN.conv2d(x, w, padding=1, groups=3),
         [((2, 3, 4, 4), F), ((3, 1, 3, 3), F)],
         lambda x, w: ref.conv2d(x, w, padding=(1, 1, 1, 1), groups=3), rtol=1e-4),
    Case("conv2d_nhwc_hwio", lambda x, w: NN.conv2d(x, w, padding=1, data_layout="NHWC",
                                                    kernel_layout="HWIO"),
         [((1, 5, 5, 3), F), ((3, 3, 3, 2), F)],
         lambda x, w: _nhwc(ref.conv2d(_nchw(x), w.transpose(3, 2, 0, 1),
                                       padding=(1, 1, 1, 1))), rtol=1e-4),
    Case("conv2d_symbolic_batch", lambda x, w: NN.conv2d(x, w, padding=1),
         [(("n", 2, 4, 4), F), ((2, 2, 3, 3), F)],
         lambda x, w: ref.conv2d(x, w, padding=(1, 1, 1, 1)), rtol=1e-4, sizes={"n": 3}),
    Case("conv2d_transpose", lambda x, w: NN.conv2d_transpose(x, w, strides=2, padding=1,
                                                              output_padding=1),
         [((1, 3, 4, 5), F), ((3, 2, 3, 3), F)],
         lambda x, w: ref.conv2d_transpose(x, w, (2, 2), (1, 1, 1, 1), (1, 1)), rtol=1e-4),
    Case("conv2d_transpose_groups_dilation",
         lambda x, w: NN.conv2d_transpose(x, w, strides=(1, 2), dilation=2, groups=2),
         [((2, 4, 3, 3), F), ((4, 1, 2, 3), F)],
         lambda x, w: ref.conv2d_transpose(x, w, (1, 2), dilation=(2, 2), groups=2),
         rtol=1e-4),
    Case("max_pool2d", lambda x: NN.max_pool2d(x, 3, 2, padding=1), [((1, 2, 7, 6), F)],
         lambda x: ref.pool2d(x, "max", (3, 3), (2, 2), (1, 1, 1, 1))),
    Case("max_pool2d_ceil_dilated", lambda x: NN.max_pool2d(x, 2, 2, dilation=2,
                                                            ceil_mode=True),
         [((1, 1, 8, 9), F)], lambda x: ref.pool2d(x, "max", (2, 2), (2, 2), dilation=(2, 2),
                                                   ceil_mode=True)),
    Case("max_pool2d_nhwc", lambda x: NN.max_pool2d(x, 2, 2, layout="NHWC"),
         [((2, 4, 6, 3), F)], lambda x: _nhwc(ref.pool2d(_nchw(x), "max", (2, 2), (2, 2)))),
    Case("avg_pool2d", lambda x: NN.avg_pool2d(x, 3, 2, padding=1), [((1, 2, 7, 6), F)],
         lambda x: ref.pool2d(x, "avg", (3, 3), (2, 2), (1, 1, 1, 1))),
    Case("avg_pool2d_include_pad_ceil", lambda x: NN.avg_pool2d(
        x, (3, 2), 2, padding=1, ceil_mode=True, count_include_pad=True), [((1, 2, 6, 5), F)],
         lambda x: ref.pool2d(x, "avg", (3, 2), (2, 2), (1, 1, 1, 1), ceil_mode=True,
                              count_include_pad=True)),
    Case("adaptive_avg_pool2d", lambda x: NN.adaptive_avg_pool2d(x, (3, 2)),
         [((2, 3, 7, 5), F)], lambda x: ref.adaptive_avg_pool2d(x, (3, 2))),
    Case("adaptive_avg_pool2d_global", lambda x: NN.adaptive_avg_pool2d(x, 1),
         [(("n", 4, 3, 3), F)], lambda x: x.mean(axis=(2, 3), keepdims=True), sizes={"n": 2}),
    Case("adaptive_avg_pool2d_same", NN.adaptive_avg_pool2d, [((1, 2, 3, 4), F)],
         lambda x: x),
    Case("layer_norm", lambda x, g, b: NN.layer_norm(x, g, b, axes=-1),
         [(("n", 4, 8), F), ((8,), F), ((8,), F)],
         lambda x, g, b: ref.layer_norm(x, g, b, -1), rtol=1e-4, sizes={"n": 3}),
    Case("layer_norm_two_axes", lambda x, g, b: NN.layer_norm(x, g, b, axes=[1, 2],
                                                              epsilon=1e-3),
         [((2, 3, 4), F), ((3, 4), F), ((3, 4), F)],
         lambda x, g, b: ref.layer_norm(x, g, b, (1, 2), 1e-3), rtol=1e-4),
    Case("layer_norm_no_affine", lambda x, g, b: NN.layer_norm(x, g, b, axes=-1, center=False,
                                                               scale=False),
         [((2, 6), F), ((6,), F), ((6,), F)],
         lambda x, g, b: ref.layer_norm(x, 1, 0, -1), rtol=1e-4),
    Case("group_norm", lambda x, g, b: NN.group_norm(x, g, b, 2, 1, [2, 3]),
         [((2, 6, 3, 4), F), ((6,), F), ((6,), F)],
         lambda x, g, b: ref.group_norm(x, g, b, 2), rtol=1e-4),
    Case("rms_norm", lambda x, w: NN.rms_norm(x, w), [((3, 8), F), ((8,), F)],
         lambda x, w: ref.rms_norm(x, w, -1), rtol=1e-4),
    Case("batch_norm_inference", lambda x, g, b, m, v: NN.batch_norm(x, g, b, m, v, axis=1,
                                                                     training=False),
         [((2, 3, 4, 4), F), ((3,), F), ((3,), F), ((3,), F), ((3,), F, _positive)],
         lambda x, g, b, m, v: ref.batch_norm(x, g, b, m, v), rtol=1e-4),
    Case("batch_norm_training", lambda x, g, b, m, v: NN.batch_norm(x, g, b, m, v, axis=1),
         [((4, 3, 2), F), ((3,), F), ((3,), F), ((3,), F), ((3,), F, _positive)],
         lambda x, g, b, m, v: ref.batch_norm(x, g, b, m, v, training=True), rtol=1e-4),
    Case("attention", NN.attention, [((2, 5, 3, 4), F), ((2, 6, 3, 4), F), ((2, 6, 3, 2), F)],
         ref.attention, rtol=1e-4),
    Case("attention_causal_bias", lambda q, k, v, b: NN.attention(
        q, k, v, b, scale=0.3, causal_mask="TopLeft"),
         [((1, 4, 2, 3), F), ((1, 4, 2, 3), F), ((1, 4, 2, 3), F), ((1, 1, 4, 4), F)],
         lambda q, k, v, b: ref.attention(q, k, v, b, 0.3, "TopLeft"), rtol=1e-4),
    Case("attention_bottom_right_window", lambda q, k, v: NN.attention(
        q, k, v, causal_mask="BottomRight", window_size=2),
         [((1, 3, 1, 4), F), ((1, 5, 1, 4), F), ((1, 5, 1, 4), F)],
         lambda q, k, v: ref.attention(q, k, v, causal="BottomRight", window=2), rtol=1e-4),
    Case("attention_symbolic_length", NN.attention,
         [((1, "s", 2, 4), F), ((1, "s", 2, 4), F), ((1, "s", 2, 4), F)], ref.attention,
         rtol=1e-4, sizes={"s": 5}),
])


def test_legalized_and_round_trips(case):
    check_legalized(case)


def test_built_kernels_match_numpy(vm, case):
    check_numeric(vm, case)
