"""ONNX RoiAlign: each region of interest pooled to ``output_height x output_width`` bins
from bilinear samples of its image, averaged (``avg``) or maximized (``max``).

Per region, bin ``(ph, pw)`` samples a ``sampling_ratio x sampling_ratio`` grid at
``start + p * bin + (i + 0.5) * bin / ratio`` along each axis (coordinates times
``spatial_scale``, less 0.5 for ``half_pixel``; ``output_half_pixel`` regions are at
least 1 long). A sample more than one pixel outside the image counts as 0; the others
are clamped into it and read bilinearly from their 4 neighbours. As in onnx's reference
(and onnxruntime), ``max`` takes the largest of the 4 weighted neighbours of each
sample, then the largest over the samples. The sample positions and weights are computed
per axis at run time from ``rois`` (``[R, 4]``: x1, y1, x2, y2); each of the 4
neighbours of every sample is then picked from the region's image (``batch_indices``,
checked at run time to name images of ``X``) by two matrix products with weighted
one-hot matrices (``[S, H] @ image @ [W, S]``), which keeps the kernels small (an
infinite pixel makes the whole row and column NaN, where 0 * inf enters the sums).
``sampling_ratio`` 0 (a per-region grid size) is not supported.
"""
import numpy as np

from rvm.relax.frontend.onnx.common import is_float
from rvm.relax.frontend.onnx.registry import converter
from rvm.relax.frontend.onnx.resize_runtime import _require as require
from rvm.relax.frontend.onnx.runtime_shape import int64_tensor
from rvm.relax.op import binary, index, linear_algebra, manipulate, search, statistical, \
    unary


@converter("RoiAlign")
def _roi_align(ctx, inputs, attrs):
    x, rois = ctx.tensor(inputs[0]), ctx.tensor(inputs[1])
    dims, dtype = ctx.shape(x), ctx.dtype(x)
    if len(dims) != 4 or not all(isinstance(d, int) for d in dims[1:]) or not is_float(dtype):
        raise ValueError(f"RoiAlign expects a float [N, C, H, W] input with static C, H and "
                         f"W, got {dtype}{dims}")
    count = ctx.shape(rois)[0]
    if ctx.shape(rois) != [count, 4] or ctx.dtype(rois) != dtype:
        raise ValueError(f"RoiAlign's rois must be [R, 4] of the input's dtype {dtype}, got "
                         f"{ctx.dtype(rois)}{ctx.shape(rois)}")
    ratio = int(attrs.get("sampling_ratio", 0))
    if ratio < 1:
        raise ValueError(f"RoiAlign supports a sampling_ratio >= 1 (a fixed sampling grid), "
                         f"got {ratio}")
    mode = attrs.get("mode", "avg")
    transform = attrs.get("coordinate_transformation_mode", "half_pixel")
    if mode not in ("avg", "max") or transform not in ("half_pixel", "output_half_pixel"):
        raise ValueError(f"RoiAlign's mode must be avg or max and its "
                         f"coordinate_transformation_mode half_pixel or output_half_pixel, "
                         f"got {mode!r} and {transform!r}")
    pooled = [int(attrs.get("output_height", 1)), int(attrs.get("output_width", 1))]
    if min(pooled) < 1:
        raise ValueError(f"RoiAlign's output_height and output_width must be >= 1, got "
                         f"{pooled}")
    batch = int64_tensor(ctx, inputs[2])
    if ctx.shape(batch) != [count]:
        raise ValueError(f"RoiAlign's batch_indices must hold one index per region "
                         f"([{count}]), got shape {ctx.shape(batch)}")
    require(ctx, binary.logical_and(
        binary.greater_equal(batch, ctx.tensor(np.array(0, "int64"))),
        binary.less(batch, ctx.tensor(np.array(dims[0], "int64")))),
        "roi_align_batch_indices_within_the_input")
    wide = dtype if dtype in ("float32", "float64") else "float32"
    if wide != dtype:
        x, rois = (ctx.emit(unary.astype(v, wide)) for v in (x, rois))
    scale = float(attrs.get("spatial_scale", 1.0))
    offset = 0.5 if transform == "half_pixel" else 0.0
    axes = []
    for k, (length, bins) in enumerate(zip(dims[2:], pooled)):  # y, then x
        start, end = (ctx.emit(binary.subtract(binary.multiply(
            index.take(rois, ctx.tensor(np.array(c, "int64")), axis=1), _c(ctx, scale, wide)),
            _c(ctx, offset, wide))) for c in (1 - k, 3 - k))
        size = ctx.emit(binary.subtract(end, start))
        if transform == "output_half_pixel":
            size = ctx.emit(binary.maximum(size, _c(ctx, 1.0, wide)))
        axes.append(_samples(ctx, start, size, bins, ratio, length, wide))
    images = ctx.emit(index.take(x, batch, axis=0))  # [R, C, H, W]
    rows = [_picker(ctx, pos, weight, dims[2], False) for pos, weight in axes[0][:2]]
    columns = [_picker(ctx, pos, weight, dims[3], True) for pos, weight in axes[1][:2]]
    out = None
    for row in rows:
        picked = ctx.emit(linear_algebra.matmul(row, images))  # [R, C, Sy, W]
        for column in columns:
            term = ctx.emit(linear_algebra.matmul(picked, column))  # [R, C, Sy, Sx]
            if out is None:
                out = term
            else:
                out = ctx.emit((binary.add if mode == "avg" else binary.maximum)(out, term))
    samples = [count, dims[1], pooled[0], ratio, pooled[1], ratio]
    out = ctx.emit(manipulate.reshape(out, samples))
    if mode == "avg":
        out = ctx.emit(binary.divide(statistical.sum(out, axis=[3, 5]),
                                     _c(ctx, float(ratio * ratio), wide)))
    else:
        out = ctx.emit(statistical.max(out, axis=[3, 5]))
    return out if wide == dtype else ctx.emit(unary.astype(out, dtype))


def _c(ctx, value, dtype):
    return ctx.tensor(np.array(value, dtype))


def _samples(ctx, start, size, bins, ratio, length, dtype):
    """One axis's samples of every region, ``[R, bins * ratio]``: ``[(low, weight),
    (high, weight), valid]`` (the two neighbours' positions and bilinear weights, and
    whether the sample is within one pixel of the image)."""
    steps = (np.arange(bins)[:, None] + (np.arange(ratio)[None, :] + 0.5) / ratio)
    where = ctx.emit(binary.add(
        manipulate.expand_dims(start, [1]),
        binary.multiply(manipulate.expand_dims(binary.divide(size, _c(ctx, float(bins), dtype)),
                                               [1]),
                        ctx.tensor(steps.reshape(1, bins * ratio).astype(dtype)))))
    valid = ctx.emit(binary.logical_and(binary.greater_equal(where, _c(ctx, -1.0, dtype)),
                                        binary.less_equal(where, _c(ctx, float(length), dtype))))
    # clamped into [0, L - 1]: a sample past the last pixel reads it with weight 1
    where = ctx.emit(binary.minimum(binary.maximum(where, _c(ctx, 0.0, dtype)),
                                    _c(ctx, float(length - 1), dtype)))
    low = ctx.emit(unary.floor(where))
    high = ctx.emit(binary.minimum(binary.add(low, _c(ctx, 1.0, dtype)),
                                   _c(ctx, float(length - 1), dtype)))
    frac = ctx.emit(binary.subtract(where, low))
    zero = _c(ctx, 0.0, dtype)
    low_w = ctx.emit(search.where(valid, binary.subtract(_c(ctx, 1.0, dtype), frac), zero))
    high_w = ctx.emit(search.where(valid, frac, zero))
    as_int = [ctx.emit(unary.astype(v, "int64")) for v in (low, high)]
    return [(as_int[0], low_w), (as_int[1], high_w), valid]


def _picker(ctx, pos, weight, length, transposed):
    """The matrix that picks, weighted, the neighbour ``pos`` (``[R, S]``) of every sample
    along an axis of ``length``: ``[R, 1, S, L]`` (multiplied on the left of the images,
    for y) or ``transposed`` ``[R, 1, L, S]`` (on their right, for x)."""
    one_hot = binary.equal(manipulate.expand_dims(pos, [2]),
                           ctx.tensor(np.arange(length, dtype="int64")))
    matrix = ctx.emit(binary.multiply(unary.astype(one_hot, ctx.dtype(weight)),
                                      manipulate.expand_dims(weight, [2])))  # [R, S, L]
    if transposed:
        matrix = ctx.emit(manipulate.permute_dims(matrix, [0, 2, 1]))
    return ctx.emit(manipulate.expand_dims(matrix, [1]))
