"""ONNX Resize (and the deprecated Upsample): nearest, linear and cubic interpolation,
each axis separately.

When roi, scales and sizes are constants the geometry is static and computed at import
(``resize_runtime`` computes it at run time otherwise): for every resized axis,
where each output element samples the input (the coordinate transformation
mode). Nearest mode becomes a ``take`` of the chosen input indices; linear and
cubic modes become a matmul with an interpolation matrix ``W`` (output x
input) whose row ``i`` holds the kernel weights of output ``i`` (edges clamp,
or with ``exclude_outside`` drop and renormalize; ``antialias`` widens the
kernel by the downscaling factor). ``tf_crop_and_resize`` samples outside the
region of interest get ``extrapolation_value``.
"""
import math

import numpy as np

from rvm.relax.frontend.onnx import resize_runtime
from rvm.relax.frontend.onnx.common import is_float
from rvm.relax.frontend.onnx.ops_shape import normalize_axis
from rvm.relax.frontend.onnx.registry import attr_ints, converter
from rvm.relax.frontend.onnx.runtime_shape import is_run_time
from rvm.relax.op import index, linear_algebra, manipulate, search, unary

_MODES = ("nearest", "linear", "cubic")
_TRANSFORMS = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
               "asymmetric", "tf_crop_and_resize")


def source_coordinates(mode, n, m, scale, roi=(0.0, 1.0)):
    """Where each of the ``m`` outputs samples an axis of ``n`` inputs (float positions)."""
    i = np.arange(m, dtype="float64")
    if mode == "half_pixel":
        return (i + 0.5) / scale - 0.5
    if mode == "half_pixel_symmetric":
        adjustment = m / (scale * n)
        center = n / 2
        return center * (1 - adjustment) + (i + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (i + 0.5) / scale - 0.5 if m > 1 else np.zeros(m)
    if mode == "align_corners":  # the resized length is n * scale, before flooring
        return i * (n - 1) / (n * scale - 1) if n * scale > 1 else np.zeros(m)
    if mode == "asymmetric":
        return i / scale
    start, end = roi
    if m > 1:
        return start * (n - 1) + i * (end - start) * (n - 1) / (m - 1)
    return np.full(m, 0.5 * (start + end) * (n - 1))


def nearest_indices(x, rounding, n):
    """The input index each position in ``x`` rounds to (clamped to the axis)."""
    floor = np.floor(x)
    if rounding == "floor":
        out = floor
    elif rounding == "ceil":
        out = np.ceil(x)
    elif rounding in ("round_prefer_floor", "round_prefer_ceil"):
        half = np.isclose(x - floor, 0.5)
        out = np.where(half, floor if rounding == "round_prefer_floor" else floor + 1,
                       np.floor(x + 0.5))
    else:
        raise ValueError(f"nearest_mode {rounding!r}; expected round_prefer_floor, "
                         "round_prefer_ceil, floor or ceil")
    return np.clip(out, 0, n - 1).astype("int64")


def _kernel(mode, t, a):
    t = np.abs(t)
    if mode == "linear":
        return np.maximum(0.0, 1.0 - t)
    near = ((a + 2) * t - (a + 3)) * t * t + 1
    far = ((a * t - 5 * a) * t + 8 * a) * t - 4 * a
    return np.where(t <= 1, near, np.where(t < 2, far, 0.0))


def interpolation_matrix(mode, x, n, scale, a=-0.75, exclude_outside=False,
                         antialias=False):
    """The (len(x), n) matrix of linear or cubic interpolation weights at positions ``x``."""
    shrink = min(scale, 1.0) if antialias else 1.0
    support = (1.0 if mode == "linear" else 2.0) / shrink
    weights = np.zeros((len(x), n))
    for row, center in enumerate(x):
        taps = np.arange(math.floor(center - support), math.ceil(center + support) + 1)
        w = _kernel(mode, (taps - center) * shrink, a)
        if exclude_outside:
            w = np.where((taps >= 0) & (taps < n), w, 0.0)
        total = w.sum()
        if (antialias or exclude_outside) and total != 0:
            w = w / total
        np.add.at(weights[row], np.clip(taps, 0, n - 1), w)
    return weights


def _output_sizes(ctx, dims, axes, scales, sizes, policy):
    if sizes is not None:
        sizes = [int(s) for s in sizes.reshape(-1)]
        ratios = [s / dims[a] for s, a in zip(sizes, axes)]
        if policy in ("not_larger", "not_smaller"):
            pick = min(ratios) if policy == "not_larger" else max(ratios)
            ratios = [pick] * len(axes)
            sizes = [int(math.floor(pick * dims[a] + 0.5)) for a in axes]
        elif policy != "stretch":
            raise ValueError(f"keep_aspect_ratio_policy {policy!r}; expected stretch, "
                             "not_larger or not_smaller")
        return sizes, ratios
    scales = [float(s) for s in scales.reshape(-1)]
    return [int(math.floor(dims[a] * s)) for a, s in zip(axes, scales)], scales


@converter("Resize")
def _resize(ctx, inputs, attrs):
    if ctx.opset < 11:  # (X, scales), sampled as Upsample samples
        return _upsample(ctx, inputs, attrs)
    padded = list(inputs[1:4]) + [None] * (4 - len(inputs))
    return _resize_by(ctx, inputs[0], *padded, attrs)


def _resize_by(ctx, x, roi, scales, sizes, attrs):
    x = ctx.tensor(x)
    dims = ctx.shape(x)
    if not all(isinstance(d, int) for d in dims):
        raise ValueError("Resize needs static input dimensions")
    roi, scales, sizes = (_given(ctx, v) for v in (roi, scales, sizes))
    axes = attr_ints(attrs, "axes") or list(range(len(dims)))
    axes = [normalize_axis(a, len(dims)) for a in axes]
    mode = attrs.get("mode", "nearest")
    transform = attrs.get("coordinate_transformation_mode", "half_pixel")
    if mode not in _MODES:
        raise ValueError(f"Resize mode {mode!r}; expected one of {list(_MODES)}")
    if transform not in _TRANSFORMS:
        raise ValueError(f"coordinate_transformation_mode {transform!r}; expected one of "
                         f"{list(_TRANSFORMS)}")
    if sizes is None and scales is None:
        raise ValueError("Resize needs scales or sizes")
    if transform != "tf_crop_and_resize":
        roi = None  # only tf_crop_and_resize reads it
    if any(is_run_time(v) for v in (roi, scales, sizes)):
        return resize_runtime.resize(ctx, x, axes, attrs, roi, scales, sizes, apply_matrix)
    outs, ratios = _output_sizes(ctx, dims, axes, scales, sizes,
                                 attrs.get("keep_aspect_ratio_policy", "stretch"))
    dtype = ctx.dtype(x)
    inside = None
    for k, (axis, m, scale) in enumerate(zip(axes, outs, ratios)):
        n = dims[axis]
        if m == n and scale == 1.0 and transform != "tf_crop_and_resize":
            continue
        window = (0.0, 1.0)
        if roi is not None and roi.size:
            flat = roi.reshape(-1)
            window = (float(flat[k]), float(flat[k + len(axes)]))
        coords = source_coordinates(transform, n, m, scale, window)
        if transform == "tf_crop_and_resize":
            valid = (coords >= 0) & (coords <= n - 1)
            shape = [1] * len(dims)
            shape[axis] = m
            valid = valid.reshape(shape)
            inside = valid if inside is None else inside & valid
        if mode == "nearest":
            picks = nearest_indices(coords, attrs.get("nearest_mode", "round_prefer_floor"), n)
            x = ctx.emit(index.take(x, ctx.tensor(picks), axis=axis))
            continue
        weights = interpolation_matrix(mode, coords, n, scale, attrs.get("cubic_coeff_a",
                                                                          -0.75),
                                       bool(attrs.get("exclude_outside", 0)),
                                       bool(attrs.get("antialias", 0)))
        compute = dtype if is_float(dtype) else "float32"
        x = apply_matrix(ctx, x, axis, len(dims), ctx.tensor(weights.T.astype(compute)), dtype)
    if inside is not None and not inside.all():
        fill = ctx.tensor(np.array(attrs.get("extrapolation_value", 0.0), dtype))
        x = ctx.emit(search.where(ctx.tensor(inside), x, fill))
    return x


@converter("Upsample")
def _upsample(ctx, inputs, attrs):
    """The deprecated Upsample (and Resize before opset 11): Resize by ``scales`` (an input
    since opset 9, an attribute before) sampling at ``output / scale`` (asymmetric),
    nearest mode rounding down."""
    mode = attrs.get("mode", "nearest")
    if mode not in ("nearest", "linear"):
        raise ValueError(f"Upsample mode {mode!r}; expected nearest or linear")
    scales = inputs[1] if len(inputs) > 1 else np.array(attrs.get("scales", ()), "float32")
    return _resize_by(ctx, inputs[0], None, scales, None,
                      {"mode": mode, "coordinate_transformation_mode": "asymmetric",
                       "nearest_mode": "floor"})


def _given(ctx, value):
    """An optional input: None when omitted or empty (static length 0)."""
    if value is None:
        return None
    dims = ctx.shape(value)
    return None if len(dims) == 1 and isinstance(dims[0], int) and dims[0] == 0 else value


def apply_matrix(ctx, x, axis, ndim, weights_t, dtype):
    """``x`` contracted along ``axis`` with the interpolation matrix whose transpose
    (input x output, in the float type the contraction computes in) is ``weights_t``."""
    compute = dtype if is_float(dtype) else "float32"
    if compute != dtype:
        x = ctx.emit(unary.astype(x, compute))
    order = [a for a in range(ndim) if a != axis] + [axis]
    moved = x if axis == ndim - 1 else ctx.emit(manipulate.permute_dims(x, order))
    out = ctx.emit(linear_algebra.matmul(moved, weights_t))
    if axis != ndim - 1:
        back = [order.index(a) for a in range(ndim)]
        out = ctx.emit(manipulate.permute_dims(out, back))
    if compute != dtype:
        out = ctx.emit(unary.astype(ctx.emit(unary.round(out)), dtype))
    return out

