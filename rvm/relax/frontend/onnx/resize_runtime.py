"""ONNX Resize whose ``scales``, ``sizes`` or ``roi`` are known only at run time.

The output dimensions are computed at run time as an int64 tensor (``sizes``, rescaled
to keep the aspect ratio when ``keep_aspect_ratio_policy`` says so, or
``floor(in_dim * scale)``) and bound to symbolic dimensions by ``tensor_to_shape`` and
``match_cast`` (``runtime_shape.shape_vars``). Each resized axis then computes, at run
time and in float64, where its outputs sample the input (the same coordinate
transformations as ``ops_resize.source_coordinates``): nearest mode takes the rounded
indices; linear and cubic modes build the interpolation matrix from the kernel weights
of a static range of input taps around the axis, clamped to the axis by a constant
matrix (the taps cover every sampling position the transformations give for a scale
that leaves at least one output). Scales must be positive with a representable output
length, sizes non-negative, and the roi of ``tf_crop_and_resize`` finite: each is checked
at run time (onnxruntime takes a NaN or infinite roi and returns values that depend on
the mode; onnx's reference evaluator returns NaN). A finite crop window so wide that its
sampling positions overflow (to infinities, or NaN from inf - inf) samples outside the
input, so those outputs are the extrapolation value.
"""
import numpy as np

from rvm.relax.frontend.onnx.common import is_float
from rvm.relax.frontend.onnx.runtime_shape import scalar_tensor, shape_vars, static_length
from rvm.relax.op import binary, create, index, linear_algebra, manipulate, search, \
    statistical, unary

#: Largest output length a scale may give (keeps the float to int64 conversion defined).
_MAX_LENGTH = float(1 << 62)


def _f64(ctx, value):
    return ctx.tensor(np.array(value, "float64"))


def _float_tensor(ctx, value):
    tensor = ctx.tensor(value)
    if ctx.dtype(tensor) != "float64":
        tensor = ctx.emit(unary.astype(tensor, "float64"))
    return tensor


def _element(ctx, tensor, k):
    """Element ``k`` of a 1-D tensor as a 0-d tensor."""
    picked = index.take(tensor, ctx.tensor(np.array([k], "int64")), axis=0)
    return ctx.emit(manipulate.reshape(picked, []))


def _require(ctx, condition, hint):
    """A run-time check: the bool tensor ``condition`` (any shape) must hold everywhere,
    else the call fails naming ``hint``."""
    holds = ctx.emit(statistical.min(unary.astype(condition, "int64")))
    shape_vars(ctx, ctx.emit(manipulate.reshape(holds, [1])), [1], hint)


def output_lengths(ctx, dims, axes, scales, sizes, policy):
    """``(lengths, ratios)``: the output length of every resized axis (ints or symbolic
    dimensions bound at run time) and its scale (a 1-D float64 tensor)."""
    count = len(axes)
    inputs = np.array([dims[a] for a in axes], "float64")
    if sizes is not None:
        if static_length(ctx, sizes, "Resize's sizes") != count:
            raise ValueError(f"Resize's sizes must hold {count} lengths (one per axis), got "
                             f"shape {ctx.shape(sizes)}")
        wanted = _float_tensor(ctx, ctx.emit(manipulate.reshape(ctx.tensor(sizes), [count])))
        _require(ctx, binary.greater_equal(wanted, _f64(ctx, 0.0)),
                 "resize_sizes_non_negative")
        ratios = ctx.emit(binary.divide(wanted, ctx.tensor(inputs)))
        if policy == "stretch":
            lengths = wanted
        elif policy in ("not_larger", "not_smaller"):
            pick = (statistical.min if policy == "not_larger" else statistical.max)(ratios)
            ratios = ctx.emit(binary.multiply(pick, ctx.tensor(np.ones(count))))
            lengths = ctx.emit(unary.floor(binary.add(
                binary.multiply(ratios, ctx.tensor(inputs)), _f64(ctx, 0.5))))
        else:
            raise ValueError(f"keep_aspect_ratio_policy {policy!r}; expected stretch, "
                             "not_larger or not_smaller")
    else:
        if static_length(ctx, scales, "Resize's scales") != count:
            raise ValueError(f"Resize's scales must hold {count} factors (one per axis), got "
                             f"shape {ctx.shape(scales)}")
        ratios = _float_tensor(ctx, ctx.emit(manipulate.reshape(ctx.tensor(scales), [count])))
        exact = ctx.emit(binary.multiply(ratios, ctx.tensor(inputs)))
        _require(ctx, binary.logical_and(binary.greater(ratios, _f64(ctx, 0.0)),
                                         binary.less(exact, _f64(ctx, _MAX_LENGTH))),
                 "resize_scales_positive_and_finite")
        lengths = ctx.emit(unary.floor(exact))
    lengths = shape_vars(ctx, ctx.emit(unary.astype(lengths, "int64")), [None] * count,
                         "resize")
    return lengths, ratios


def coordinates(ctx, transform, n, m, scale, roi):
    """Where each of the ``m`` outputs samples an axis of ``n`` inputs: a float64 tensor of
    ``m`` positions (``scale`` a 0-d float64 tensor, ``roi`` the axis' (start, end) as 0-d
    float64 tensors or None)."""
    i = ctx.emit(unary.astype(create.arange(0, m, 1, dtype="int64"), "float64"))
    length = ctx.emit(unary.astype(scalar_tensor(ctx, m), "float64"))
    one, half = _f64(ctx, 1.0), _f64(ctx, 0.5)
    centered = ctx.emit(binary.subtract(binary.divide(binary.add(i, half), scale), half))
    if transform == "half_pixel":
        return centered
    if transform == "half_pixel_symmetric":
        adjustment = binary.divide(length, binary.multiply(scale, _f64(ctx, n)))
        offset = binary.multiply(_f64(ctx, n / 2), binary.subtract(one, adjustment))
        return ctx.emit(binary.add(offset, centered))
    if transform == "pytorch_half_pixel":
        return ctx.emit(search.where(binary.greater(length, one), centered, _f64(ctx, 0.0)))
    if transform == "align_corners":  # the resized length is n * scale, before flooring
        resized = ctx.emit(binary.multiply(scale, _f64(ctx, n)))
        wide = ctx.emit(binary.greater(resized, one))
        span = search.where(wide, binary.subtract(resized, one), one)
        return ctx.emit(search.where(wide, binary.divide(binary.multiply(i, _f64(ctx, n - 1)),
                                                         span), _f64(ctx, 0.0)))
    if transform == "asymmetric":
        return ctx.emit(binary.divide(i, scale))
    start, end = roi if roi is not None else (_f64(ctx, 0.0), one)
    step = binary.divide(binary.multiply(binary.subtract(end, start), _f64(ctx, n - 1)),
                         binary.maximum(binary.subtract(length, one), one))
    spread = binary.add(binary.multiply(start, _f64(ctx, n - 1)), binary.multiply(i, step))
    middle = binary.multiply(binary.multiply(half, binary.add(start, end)), _f64(ctx, n - 1))
    return ctx.emit(search.where(binary.greater(length, one), spread, middle))


def nearest_indices(ctx, x, rounding, n):
    """The int64 input index each position in ``x`` rounds to (clamped to the axis); the
    rounding rules of ``ops_resize.nearest_indices``."""
    floor = ctx.emit(unary.floor(x))
    if rounding == "floor":
        out = floor
    elif rounding == "ceil":
        out = ctx.emit(unary.ceil(x))
    elif rounding in ("round_prefer_floor", "round_prefer_ceil"):
        # numpy.isclose(x - floor, 0.5) at its default tolerances
        half = binary.less_equal(unary.abs(binary.subtract(binary.subtract(x, floor),
                                                           _f64(ctx, 0.5))),
                                 _f64(ctx, 1e-8 + 1e-5 * 0.5))
        tie = floor if rounding == "round_prefer_floor" else binary.add(floor, _f64(ctx, 1.0))
        out = ctx.emit(search.where(half, tie, unary.floor(binary.add(x, _f64(ctx, 0.5)))))
    else:
        raise ValueError(f"nearest_mode {rounding!r}; expected round_prefer_floor, "
                         "round_prefer_ceil, floor or ceil")
    out = binary.minimum(binary.maximum(out, _f64(ctx, 0.0)), _f64(ctx, n - 1))
    return ctx.emit(unary.astype(out, "int64"))


def _kernel(ctx, mode, t, a):
    t = ctx.emit(unary.abs(t))
    zero = _f64(ctx, 0.0)
    if mode == "linear":
        return ctx.emit(binary.maximum(zero, binary.subtract(_f64(ctx, 1.0), t)))
    square = ctx.emit(binary.multiply(t, t))
    near = binary.add(binary.multiply(binary.subtract(binary.multiply(_f64(ctx, a + 2), t),
                                                      _f64(ctx, a + 3)), square),
                      _f64(ctx, 1.0))
    far = binary.subtract(binary.multiply(binary.add(binary.multiply(
        binary.subtract(binary.multiply(_f64(ctx, a), t), _f64(ctx, 5 * a)), t),
        _f64(ctx, 8 * a)), t), _f64(ctx, 4 * a))
    return ctx.emit(search.where(binary.less_equal(t, _f64(ctx, 1.0)), near,
                                 search.where(binary.less(t, _f64(ctx, 2.0)), far, zero)))


def interpolation_weights(ctx, mode, x, n, scale, a, exclude_outside, antialias):
    """The transposed interpolation matrix (``n`` x ``len(x)``, float64) of linear or cubic
    weights at the run-time positions ``x``: ``ops_resize.interpolation_matrix`` computed
    over the taps ``[-pad, n + pad)``, each clamped to the axis."""
    reach = 1 if mode == "linear" else 2
    # a sampling position lies within [-0.5, 2n] for any scale that leaves an output; an
    # antialiased kernel over a downscale of at least 1 / (2n) spans up to 2n * reach
    pad = n + 4 + (2 * n * reach if antialias else 0)
    taps = np.arange(-pad, n + pad, dtype="float64")
    shrink = ctx.emit(binary.minimum(scale, _f64(ctx, 1.0))) if antialias else None
    offsets = binary.subtract(ctx.tensor(taps.reshape(-1, 1)),
                              manipulate.reshape(x, [1, ctx.shape(x)[0]]))
    if shrink is not None:
        offsets = binary.multiply(offsets, shrink)
    weights = _kernel(ctx, mode, ctx.emit(offsets), a)
    if exclude_outside:
        inside = ((taps >= 0) & (taps < n)).astype("float64").reshape(-1, 1)
        weights = ctx.emit(binary.multiply(weights, ctx.tensor(inside)))
    if antialias or exclude_outside:
        total = ctx.emit(statistical.sum(weights, axis=0, keepdims=True))
        zero = _f64(ctx, 0.0)
        safe = search.where(binary.equal(total, zero), _f64(ctx, 1.0), total)
        weights = ctx.emit(binary.divide(weights, safe))
    clamp = np.zeros((n, len(taps)))
    clamp[np.clip(taps, 0, n - 1).astype("int64"), np.arange(len(taps))] = 1.0
    return ctx.emit(linear_algebra.matmul(ctx.tensor(clamp), weights))


def resize(ctx, x, axes, attrs, roi, scales, sizes, apply_matrix):
    """``x`` resized along ``axes`` to run-time lengths (``ops_resize`` gives the static
    form); ``apply_matrix(ctx, x, axis, ndim, weights_t, dtype)`` contracts an axis."""
    dims = ctx.shape(x)
    dtype = ctx.dtype(x)
    lengths, ratios = output_lengths(ctx, dims, axes, scales, sizes,
                                     attrs.get("keep_aspect_ratio_policy", "stretch"))
    mode = attrs.get("mode", "nearest")
    transform = attrs.get("coordinate_transformation_mode", "half_pixel")
    if roi is not None:
        window = static_length(ctx, roi, "Resize's roi")
        if window != 2 * len(axes):
            raise ValueError(f"Resize's roi must hold 2 x {len(axes)} values (starts, then "
                             f"ends), got shape {ctx.shape(roi)}")
        roi = _float_tensor(ctx, ctx.emit(manipulate.reshape(ctx.tensor(roi), [window])))
        if transform == "tf_crop_and_resize":  # the only transform that reads it
            _require(ctx, unary.isfinite(roi), "resize_roi_finite")
    inside = None
    for k, (axis, m) in enumerate(zip(axes, lengths)):
        n = dims[axis]
        scale = _element(ctx, ratios, k)
        window = None if roi is None else (_element(ctx, roi, k),
                                           _element(ctx, roi, k + len(axes)))
        coords = coordinates(ctx, transform, n, m, scale, window)
        if transform == "tf_crop_and_resize":
            valid = ctx.emit(binary.logical_and(
                binary.greater_equal(coords, _f64(ctx, 0.0)),
                binary.less_equal(coords, _f64(ctx, n - 1))))
            valid = ctx.emit(manipulate.reshape(valid, [m if a == axis else 1
                                                        for a in range(len(dims))]))
            inside = valid if inside is None else ctx.emit(binary.logical_and(inside, valid))
        if mode == "nearest":
            picks = nearest_indices(ctx, coords, attrs.get("nearest_mode",
                                                           "round_prefer_floor"), n)
            x = ctx.emit(index.take(x, picks, axis=axis))
            continue
        weights = interpolation_weights(ctx, mode, coords, n, scale,
                                        attrs.get("cubic_coeff_a", -0.75),
                                        bool(attrs.get("exclude_outside", 0)),
                                        bool(attrs.get("antialias", 0)))
        compute = dtype if is_float(dtype) else "float32"
        x = apply_matrix(ctx, x, axis, len(dims), ctx.emit(unary.astype(weights, compute)),
                         dtype)
    if inside is not None:
        fill = ctx.tensor(np.array(attrs.get("extrapolation_value", 0.0), dtype))
        x = ctx.emit(search.where(inside, x, fill))
    return x
