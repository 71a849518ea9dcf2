"""ONNX neural-network operators: convolutions, normalizations and pooling.

2-D convolutions and pooling map to Relax's ``nn`` operators (1-D ones through
a unit height). Pooling the Relax operators do not cover (1-D and 3-D
windows, padding wider than half a window) is composed of strided slices, one
spatial axis at a time: the window's maximum or sum along an axis is a reduction over its
shifted views of the padded input. Normalizations in inference form map to
``batch_norm``/``layer_norm``; the others are composed of reductions.
"""
import numpy as np

from rvm.relax.frontend.onnx.common import lowest
from rvm.relax.frontend.onnx.ops_math import scalar
from rvm.relax.frontend.onnx.ops_layout import pad_axis
from rvm.relax.frontend.onnx.ops_shape import normalize_axis
from rvm.relax.frontend.onnx.registry import attr_ints, converter
from rvm.relax.expr import TupleGetItem
from rvm.relax.op import binary, create, index, join, manipulate, search, statistical, unary
from rvm.relax.op.nn import convolution, normalization, pooling


def _static(dims, what):
    if not all(isinstance(d, int) for d in dims):
        raise ValueError(f"{what} needs static spatial dimensions, got {dims}")
    return dims


def window_pads(attrs, spatial, kernel, strides, dilations, transpose=False):
    """ONNX pads (begins then ends) after ``auto_pad``."""
    count = len(kernel)
    auto = attrs.get("auto_pad", "NOTSET")
    if auto in ("NOTSET", ""):
        return attr_ints(attrs, "pads", [0] * 2 * count)
    if auto == "VALID":
        return [0] * 2 * count
    if auto not in ("SAME_UPPER", "SAME_LOWER"):
        raise ValueError(f"auto_pad {auto!r}; expected NOTSET, VALID, SAME_UPPER or "
                         "SAME_LOWER")
    begins, ends = [], []
    for n, k, s, d in zip(_static(spatial, "auto_pad"), kernel, strides, dilations):
        extent = (k - 1) * d + 1
        total = max((-(-n // s) - 1) * s + extent - n, 0)
        small, large = total // 2, total - total // 2
        upper = auto == "SAME_UPPER"
        begins.append(small if upper else large)
        ends.append(large if upper else small)
    return begins + ends


def _conv_attrs(ctx, x, weight_dims, attrs):
    spatial = ctx.shape(x)[2:]
    kernel = attr_ints(attrs, "kernel_shape") or list(weight_dims[2:])
    count = len(kernel)
    strides = attr_ints(attrs, "strides", [1] * count)
    dilations = attr_ints(attrs, "dilations", [1] * count)
    return spatial, kernel, strides, dilations


def _to_2d(ctx, x, count):
    """A 1-D spatial value with a unit height inserted (count 1), else ``x``."""
    return ctx.emit(manipulate.expand_dims(x, [2])) if count == 1 else x


def _from_2d(ctx, x, count):
    return ctx.emit(manipulate.squeeze(x, [2])) if count == 1 else x


def _lift(values, count, fill):
    return [fill] + list(values) if count == 1 else list(values)


def _bias(ctx, out, bias, count):
    if bias is None:
        return out
    shape = [1, -1] + [1] * count
    return ctx.emit(binary.add(out, ctx.emit(manipulate.reshape(ctx.tensor(bias), shape))))


@converter("Conv")
def _conv(ctx, inputs, attrs):
    x, w = ctx.tensor(inputs[0]), ctx.tensor(inputs[1])
    bias = inputs[2] if len(inputs) > 2 else None
    spatial, kernel, strides, dilations = _conv_attrs(ctx, x, ctx.shape(w), attrs)
    count = len(kernel)
    if count not in (1, 2):
        raise ValueError(f"Conv over {count} spatial dimensions is not supported; expected 1 "
                         "or 2")
    pads = window_pads(attrs, spatial, kernel, strides, dilations)
    begins, ends = _lift(pads[:count], count, 0), _lift(pads[count:], count, 0)
    out = ctx.emit(convolution.conv2d(
        _to_2d(ctx, x, count), _to_2d(ctx, w, count), strides=_lift(strides, count, 1),
        padding=[begins[0], begins[1], ends[0], ends[1]],
        dilation=_lift(dilations, count, 1), groups=attrs.get("group", 1)))
    return _bias(ctx, _from_2d(ctx, out, count), bias, count)


@converter("ConvTranspose")
def _conv_transpose(ctx, inputs, attrs):
    x, w = ctx.tensor(inputs[0]), ctx.tensor(inputs[1])
    bias = inputs[2] if len(inputs) > 2 else None
    spatial, kernel, strides, dilations = _conv_attrs(ctx, x, ctx.shape(w), attrs)
    count = len(kernel)
    if count not in (1, 2, 3):
        raise ValueError(f"ConvTranspose over {count} spatial dimensions is not supported; "
                         "expected 1, 2 or 3")
    extra = attr_ints(attrs, "output_padding", [0] * count)
    output_shape = attr_ints(attrs, "output_shape")
    auto = attrs.get("auto_pad", "NOTSET")
    if output_shape is not None or auto in ("SAME_UPPER", "SAME_LOWER"):
        _static(spatial, "ConvTranspose with output_shape or auto_pad")
        targets = output_shape[-count:] if output_shape is not None else \
            [n * s for n, s in zip(spatial, strides)]
        begins, ends = [], []
        for n, k, s, d, e, t in zip(spatial, kernel, strides, dilations, extra, targets):
            total = s * (n - 1) + e + (k - 1) * d + 1 - t
            if total < 0:  # the output grows: unpadded, the rest as output padding
                begins.append(0)
                ends.append(0)
                continue
            small, large = total // 2, total - total // 2
            lower_first = auto == "SAME_LOWER" or output_shape is not None and \
                auto != "SAME_UPPER"
            begins.append(large if lower_first else small)
            ends.append(small if lower_first else large)
        full = [s * (n - 1) + (k - 1) * d + 1 - b - f for n, k, s, d, b, f in
                zip(spatial, kernel, strides, dilations, begins, ends)]
        extra = [t - f for t, f in zip(targets, full)]
    else:
        pads = attr_ints(attrs, "pads", [0] * 2 * count)
        begins, ends = pads[:count], pads[count:]
    if count == 3:
        out = _conv_transpose_3d(ctx, x, w, kernel, strides, dilations, begins, ends, extra,
                                 attrs.get("group", 1))
        return _bias(ctx, out, bias, count)
    begins, ends = _lift(begins, count, 0), _lift(ends, count, 0)
    out = ctx.emit(convolution.conv2d_transpose(
        _to_2d(ctx, x, count), _to_2d(ctx, w, count), strides=_lift(strides, count, 1),
        padding=[begins[0], begins[1], ends[0], ends[1]],
        output_padding=_lift(extra, count, 0), dilation=_lift(dilations, count, 1),
        groups=attrs.get("group", 1)))
    return _bias(ctx, _from_2d(ctx, out, count), bias, count)


def _conv_transpose_3d(ctx, x, w, kernel, strides, dilations, begins, ends, extra, groups):
    """A 3-D transposed convolution as one 2-D one per kernel depth: each maps every input
    depth slice to height x width, and lands at output depth ``d * stride + k * dilation``
    (zeros inserted between depths, then shifted into place and summed)."""
    n, c, depth, _, _ = _static(ctx.shape(x), "ConvTranspose over 3 dimensions")
    slices = ctx.emit(manipulate.reshape(ctx.emit(manipulate.permute_dims(x, [0, 2, 1, 3, 4])),
                                         [n * depth, c] + ctx.shape(x)[3:]))
    stride, dilation = strides[0], dilations[0]
    spread = (depth - 1) * stride + 1
    full = spread + (kernel[0] - 1) * dilation + extra[0]
    total = None
    for k in range(kernel[0]):
        wk = ctx.emit(manipulate.squeeze(ctx.emit(index.strided_slice(w, [2], [k], [k + 1])),
                                         [2]))
        y = ctx.emit(convolution.conv2d_transpose(
            slices, wk, strides=strides[1:], padding=[begins[1], begins[2], ends[1], ends[2]],
            output_padding=extra[1:], dilation=dilations[1:], groups=groups))
        y = ctx.emit(manipulate.reshape(y, [n, depth] + ctx.shape(y)[1:]))
        if stride > 1:  # depth d moves to d * stride
            gaps = ctx.emit(manipulate.expand_dims(y, [2]))
            zeros = [n, depth, stride - 1] + ctx.shape(y)[2:]
            gaps = ctx.emit(join.concat([gaps, ctx.emit(create.zeros(zeros, ctx.dtype(y)))],
                                        axis=2))
            y = ctx.emit(manipulate.reshape(gaps, [n, depth * stride] + ctx.shape(y)[2:]))
            y = ctx.emit(index.strided_slice(y, [1], [0], [spread]))
        y = pad_axis(ctx, y, 1, k * dilation, full - k * dilation - spread, "constant", 0)
        total = y if total is None else ctx.emit(binary.add(total, y))
    total = ctx.emit(index.strided_slice(total, [1], [begins[0]], [full - ends[0]]))
    return ctx.emit(manipulate.permute_dims(total, [0, 2, 1, 3, 4]))


# -- normalizations ---------------------------------------------------------------------------
def _channel_view(ctx, value, ndim):
    """A per-channel vector shaped to broadcast over axis 1 of a rank-``ndim`` value."""
    return ctx.emit(manipulate.reshape(ctx.tensor(value), [1, -1] + [1] * (ndim - 2)))


@converter("BatchNormalization")
def _batch_norm(ctx, inputs, attrs):
    x, scale, bias, mean, var = (ctx.tensor(v) for v in inputs[:5])
    eps = attrs.get("epsilon", 1e-5)
    ndim = ctx.ndim(x)
    if not attrs.get("training_mode", 0):
        out = ctx.emit(normalization.batch_norm(x, scale, bias, mean, var, axis=1,
                                                epsilon=eps, training=False))
        return ctx.emit(TupleGetItem(out, 0))
    axes = [0] + list(range(2, ndim))
    batch_mean = ctx.emit(statistical.mean(x, axis=axes, keepdims=False))
    batch_var = ctx.emit(statistical.variance(x, axis=axes, keepdims=False))
    y = _normalize(ctx, x, _channel_view(ctx, batch_mean, ndim),
                   _channel_view(ctx, batch_var, ndim), eps)
    y = ctx.emit(binary.add(ctx.emit(binary.multiply(y, _channel_view(ctx, scale, ndim))),
                            _channel_view(ctx, bias, ndim)))
    momentum = attrs.get("momentum", 0.9)
    dtype = ctx.dtype(x)

    def running(old, new):
        return ctx.emit(binary.add(
            ctx.emit(binary.multiply(old, scalar(ctx, momentum, dtype))),
            ctx.emit(binary.multiply(new, scalar(ctx, 1 - momentum, dtype)))))

    return [y, running(mean, batch_mean), running(var, batch_var)]


def _normalize(ctx, x, mean, var, eps):
    dtype = ctx.dtype(x)
    inv = ctx.emit(unary.rsqrt(ctx.emit(binary.add(var, scalar(ctx, eps, dtype)))))
    return ctx.emit(binary.multiply(ctx.emit(binary.subtract(x, mean)), inv))


def _moments(ctx, x, axes):
    mean = ctx.emit(statistical.mean(x, axis=axes, keepdims=True))
    centered = ctx.emit(binary.subtract(x, mean))
    var = ctx.emit(statistical.mean(ctx.emit(binary.multiply(centered, centered)),
                                    axis=axes, keepdims=True))
    return mean, var


@converter("LayerNormalization")
def _layer_norm(ctx, inputs, attrs):
    x, scale = ctx.tensor(inputs[0]), ctx.tensor(inputs[1])
    bias = inputs[2] if len(inputs) > 2 else None
    dims = ctx.shape(x)
    axis = normalize_axis(attrs.get("axis", -1), len(dims))
    axes = list(range(axis, len(dims)))
    eps = attrs.get("epsilon", 1e-5)
    dtype = ctx.dtype(x)
    wanted = len([o for o in ctx.node.output if o])
    if wanted == 1 and ctx.shape(scale) == dims[axis:] and \
            (bias is None or ctx.shape(bias) == dims[axis:]):
        beta = ctx.tensor(bias) if bias is not None else \
            ctx.tensor(np.zeros([int(d) for d in dims[axis:]], dtype))
        return ctx.emit(normalization.layer_norm(x, scale, beta, axes, epsilon=eps))
    stash = "float32" if attrs.get("stash_type", 1) == 1 and dtype != "float64" else dtype
    wide = x if stash == dtype else ctx.emit(unary.astype(x, stash))
    mean, var = _moments(ctx, wide, axes)
    inv = ctx.emit(unary.rsqrt(ctx.emit(binary.add(var, scalar(ctx, eps, stash)))))
    y = ctx.emit(binary.multiply(ctx.emit(binary.subtract(wide, mean)), inv))
    if stash != dtype:
        y = ctx.emit(unary.astype(y, dtype))
    y = ctx.emit(binary.multiply(y, scale))
    if bias is not None:
        y = ctx.emit(binary.add(y, ctx.tensor(bias)))
    return [y, mean, inv]


@converter("InstanceNormalization")
def _instance_norm(ctx, inputs, attrs):
    x, scale, bias = (ctx.tensor(v) for v in inputs)
    ndim = ctx.ndim(x)
    mean, var = _moments(ctx, x, list(range(2, ndim)))
    y = _normalize(ctx, x, mean, var, attrs.get("epsilon", 1e-5))
    y = ctx.emit(binary.multiply(y, _channel_view(ctx, scale, ndim)))
    return ctx.emit(binary.add(y, _channel_view(ctx, bias, ndim)))


# -- pooling ----------------------------------------------------------------------------------
@converter("GlobalAveragePool", "GlobalMaxPool")
def _global_pool(ctx, inputs, attrs):
    x = ctx.tensor(inputs[0])
    fn = statistical.mean if ctx.node.op_type == "GlobalAveragePool" else statistical.max
    return ctx.emit(fn(x, axis=list(range(2, ctx.ndim(x))), keepdims=True))


def _pool_geometry(ctx, x, attrs):
    spatial = _static(ctx.shape(x)[2:], "pooling")
    kernel = attr_ints(attrs, "kernel_shape")
    count = len(kernel)
    if count != len(spatial) or not all(k >= 1 for k in kernel):
        raise ValueError(f"kernel_shape must hold one size >= 1 per spatial axis of the "
                         f"input ({len(spatial)}), got {kernel}")
    strides = attr_ints(attrs, "strides", [1] * count)
    dilations = attr_ints(attrs, "dilations", [1] * count)
    pads = window_pads(attrs, spatial, kernel, strides, dilations)
    ceil = bool(attrs.get("ceil_mode", 0))
    outs = []
    for n, k, s, d, b, e in zip(spatial, kernel, strides, dilations, pads[:count],
                                pads[count:]):
        span = n + b + e - ((k - 1) * d + 1)
        out = (-(-span // s) if ceil else span // s) + 1
        if ceil and (out - 1) * s >= n + b:  # the last window must start inside
            out -= 1
        outs.append(out)
    return spatial, kernel, strides, dilations, pads, outs


@converter("MaxPool", "AveragePool", "LpPool")
def _pool(ctx, inputs, attrs):
    x = ctx.tensor(inputs[0])
    spatial, kernel, strides, dilations, pads, outs = _pool_geometry(ctx, x, attrs)
    count = len(kernel)
    is_max = ctx.node.op_type == "MaxPool"
    lp = attrs.get("p", 2) if ctx.node.op_type == "LpPool" else None
    with_indices = is_max and len([o for o in ctx.node.output if o]) > 1
    dtype = ctx.dtype(x)
    fill = 0
    if is_max:
        fill = lowest(dtype)
    if lp is not None:  # (sum of |x| ** p over the window) ** (1 / p)
        x = ctx.emit(binary.power(ctx.emit(unary.abs(x)), scalar(ctx, lp, dtype)))
    if count == 2 and not with_indices and lp is None:
        native = _native_pool2d(ctx, x, kernel, strides, dilations, pads, attrs, is_max)
        if native is not None:
            return native
    positions = None
    if with_indices:  # the flat index of every input element (column-major H, W on request)
        dims = ctx.shape(x)
        order = np.arange(int(np.prod(dims)), dtype="int64").reshape(dims)
        if attrs.get("storage_order", 0):
            inner = np.arange(int(np.prod(dims[2:])), dtype="int64").reshape(
                dims[2:][::-1]).T
            order = (np.arange(dims[0] * dims[1], dtype="int64").reshape(dims[:2] + [1] * count)
                     * int(np.prod(dims[2:])) + inner)
        positions = ctx.tensor(order)
    # the window is separable: reduce one spatial axis at a time over its kernel taps
    for k in range(count):
        axis = 2 + k
        need = (outs[k] - 1) * strides[k] + (kernel[k] - 1) * dilations[k] + 1
        tail = need - (spatial[k] + pads[k])
        x = pad_axis(ctx, x, axis, pads[k], tail, "constant", fill)
        if positions is not None:
            positions = pad_axis(ctx, positions, axis, pads[k], tail, "constant", 0)
        views, spots = [], []
        for tap in range(kernel[k]):
            begin = tap * dilations[k]
            end = begin + (outs[k] - 1) * strides[k] + 1
            views.append(ctx.emit(index.strided_slice(x, [axis], [begin], [end],
                                                      [strides[k]])))
            if positions is not None:
                spots.append(ctx.emit(index.strided_slice(positions, [axis], [begin], [end],
                                                          [strides[k]])))
        if positions is None:
            x = reduce_taps(ctx, views, is_max)
        else:
            x, positions = _combine(ctx, views, spots, is_max)
    if is_max:
        return [x, positions] if with_indices else x
    if lp is not None:
        return ctx.emit(binary.power(x, scalar(ctx, 1.0 / lp, dtype)))
    include_pad = bool(attrs.get("count_include_pad", 0))
    counts = np.ones(outs)
    for k in range(count):
        starts = np.arange(outs[k]) * strides[k] - pads[k]
        taps = starts[:, None] + np.arange(kernel[k])[None, :] * dilations[k]
        high = spatial[k] + pads[count + k] if include_pad else spatial[k]
        low = -pads[k] if include_pad else 0
        inside = ((taps >= low) & (taps < high)).sum(axis=1)
        shape = [1] * count
        shape[k] = outs[k]
        counts = counts * inside.reshape(shape)
    return ctx.emit(binary.divide(x, ctx.tensor(counts, dtype)))


def _native_pool2d(ctx, x, kernel, strides, dilations, pads, attrs, is_max):
    """Relax's 2-D pooling when it covers the window (padding at most half of it)."""
    half = [((k - 1) * d + 1) // 2 for k, d in zip(kernel, dilations)]
    if any(p > h for p, h in zip(pads, half + half)):
        return None
    fn = pooling.max_pool2d if is_max else pooling.avg_pool2d
    return ctx.emit(fn(x, pool_size=kernel, strides=strides, dilation=dilations,
                       padding=[pads[0], pads[1], pads[2], pads[3]],
                       ceil_mode=bool(attrs.get("ceil_mode", 0)),
                       count_include_pad=bool(attrs.get("count_include_pad", 0))))


def reduce_taps(ctx, views, is_max):
    """The maximum or the sum of ``views`` as one reduction over a new last axis: each
    spatial axis's window is then a kernel of its own (a reduction ends a fused group), where
    elementwise combinations of every axis's taps would inline into one kernel reading
    ``prod(kernel)`` shifted views of the padded input through every axis's padding."""
    if len(views) == 1:
        return views[0]
    last = ctx.ndim(views[0])
    taps = ctx.emit(join.concat([ctx.emit(manipulate.expand_dims(v, [last])) for v in views],
                                axis=last))
    return ctx.emit((statistical.max if is_max else statistical.sum)(taps, axis=[last]))


def _combine(ctx, views, spots, is_max):
    """The maximum (with the position of its first occurrence) or the sum of ``views``,
    combined pairwise so that the expression stays shallow."""
    while len(views) > 1:
        merged, places = [], []
        for j in range(0, len(views) - 1, 2):
            a, b = views[j], views[j + 1]
            if not is_max:
                merged.append(ctx.emit(binary.add(a, b)))
                continue
            if spots is None:
                merged.append(ctx.emit(binary.maximum(a, b)))
                continue
            later = ctx.emit(binary.greater(b, a))  # ties keep the earlier tap
            merged.append(ctx.emit(search.where(later, b, a)))
            places.append(ctx.emit(search.where(later, spots[j + 1], spots[j])))
        if len(views) % 2:
            merged.append(views[-1])
            if spots is not None:
                places.append(spots[-1])
        views = merged
        spots = places if spots is not None else None
    return views[0], (spots[0] if spots is not None else None)


def _stash(ctx, x, attrs):
    dtype = ctx.dtype(x)
    stash = "float32" if attrs.get("stash_type", 1) == 1 and dtype != "float64" else dtype
    return (x if stash == dtype else ctx.emit(unary.astype(x, stash))), stash


@converter("RMSNormalization")
def _rms_norm(ctx, inputs, attrs):
    x, scale = ctx.tensor(inputs[0]), ctx.tensor(inputs[1])
    ndim = ctx.ndim(x)
    axes = list(range(normalize_axis(attrs.get("axis", -1), ndim), ndim))
    wide, stash = _stash(ctx, x, attrs)
    square = ctx.emit(statistical.mean(ctx.emit(binary.multiply(wide, wide)), axis=axes,
                                       keepdims=True))
    inv = ctx.emit(unary.rsqrt(ctx.emit(binary.add(square, scalar(
        ctx, attrs.get("epsilon", 1e-5), stash)))))
    y = ctx.emit(binary.multiply(wide, inv))
    if stash != ctx.dtype(x):
        y = ctx.emit(unary.astype(y, ctx.dtype(x)))
    return ctx.emit(binary.multiply(y, scale))


@converter("GroupNormalization")
def _group_norm(ctx, inputs, attrs):
    x, scale, bias = (ctx.tensor(v) for v in inputs)
    dims = ctx.shape(x)
    groups = attrs["num_groups"]
    channels = dims[1]
    if not isinstance(channels, int) or channels % groups:
        raise ValueError(f"GroupNormalization: {channels} channels in {groups} groups")
    wide, stash = _stash(ctx, x, attrs)
    grouped = ctx.emit(manipulate.reshape(wide, [dims[0], groups, -1]))
    mean, var = _moments(ctx, grouped, [2])
    y = _normalize(ctx, grouped, mean, var, attrs.get("epsilon", 1e-5))
    if stash != ctx.dtype(x):
        y = ctx.emit(unary.astype(y, ctx.dtype(x)))
    if ctx.shape(scale)[0] == groups and groups != channels:  # opset 18: one per group
        y = ctx.emit(binary.multiply(y, ctx.emit(manipulate.reshape(scale, [1, groups, 1]))))
        y = ctx.emit(binary.add(y, ctx.emit(manipulate.reshape(bias, [1, groups, 1]))))
        return ctx.emit(manipulate.reshape(y, dims))
    y = ctx.emit(manipulate.reshape(y, dims))
    y = ctx.emit(binary.multiply(y, _channel_view(ctx, scale, len(dims))))
    return ctx.emit(binary.add(y, _channel_view(ctx, bias, len(dims))))


@converter("MeanVarianceNormalization")
def _mean_variance_norm(ctx, inputs, attrs):
    x = ctx.tensor(inputs[0])
    axes = sorted(normalize_axis(a, ctx.ndim(x)) for a in attr_ints(attrs, "axes", [0, 2, 3]))
    mean, var = _moments(ctx, x, axes)
    return _normalize(ctx, x, mean, var, 1e-9)


@converter("LpNormalization")
def _lp_norm(ctx, inputs, attrs):
    x = ctx.tensor(inputs[0])
    axis = normalize_axis(attrs.get("axis", -1), ctx.ndim(x))
    p = attrs.get("p", 2)
    if p == 1:
        norm = ctx.emit(statistical.sum(ctx.emit(unary.abs(x)), axis=[axis], keepdims=True))
    elif p == 2:
        norm = ctx.emit(unary.sqrt(ctx.emit(statistical.sum(ctx.emit(binary.multiply(x, x)),
                                                            axis=[axis], keepdims=True))))
    else:
        raise ValueError(f"LpNormalization p={p}; expected 1 or 2")
    zero = scalar(ctx, 0, ctx.dtype(x))
    return ctx.emit(search.where(ctx.emit(binary.equal(norm, zero)), zero,
                                 ctx.emit(binary.divide(x, norm))))
