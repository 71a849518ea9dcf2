"""Normalizations: layer_norm, group_norm, rms_norm and batch_norm (TVM's topi.nn names).

Statistics are the population mean and variance, computed in two passes
(mean, then squared deviations) for accuracy.
"""
from rvm.tir import op as _op
from rvm.te import operation as _te
from rvm.te.operation import compute, reduce_axis
from rvm.topi.reduction import mean as reduce_mean
from rvm.topi.reduction import moments
from rvm.topi.utils import axis_names, named, normalize_axis


def _axes(axis, ndim, what):
    axis = [axis] if isinstance(axis, int) else list(axis)
    return sorted({normalize_axis(a, ndim, what) for a in axis})


def _at_kept(idx, axes):
    """``idx`` with the ``axes`` set to 0 (indexing a keepdims statistic)."""
    return tuple(_op.const(0, i.dtype) if x in axes else i for x, i in enumerate(idx))


def _affine(value, idx, axes, gamma, beta):
    """``value * gamma + beta`` with gamma/beta indexed by the ``axes`` of ``idx``."""
    sub = tuple(idx[x] for x in axes)
    if gamma is not None:
        value = value * gamma[sub]
    if beta is not None:
        value = value + beta[sub]
    return value


def layer_norm(data, gamma, beta, axis, epsilon=1e-5):
    """``(x - mean) / sqrt(var + epsilon) * gamma + beta`` with the statistics over ``axis``;
    ``gamma``/``beta`` (None to skip) have the shape of those axes.

    >>> from rvm.te.operation import placeholder
    >>> x, g = placeholder((2, 8), name="x"), placeholder((8,), name="g")
    >>> layer_norm(x, g, g, [-1]).name
    'T_layer_norm'
    """
    axes = _axes(axis, len(data.shape), "layer_norm")
    mean, var = moments(data, axes, keepdims=True)
    eps = _op.const(epsilon, data.dtype)

    def fcompute(*i):
        at = _at_kept(i, axes)
        normed = (data[i] - mean[at]) * _op.rsqrt(var[at] + eps)
        return _affine(normed, i, axes, gamma, beta)

    return compute(data.shape, named(fcompute, axis_names("ax", len(data.shape))),
                   name="T_layer_norm")


def rms_norm(data, weight, axis, epsilon=1e-5):
    """``x / sqrt(mean(x * x) + epsilon) * weight`` with the mean over ``axis``."""
    axes = _axes(axis, len(data.shape), "rms_norm")
    squares = compute(data.shape, named(lambda *i: data[i] * data[i],
                                        axis_names("ax", len(data.shape))), name="T_square")
    ms = reduce_mean(squares, axes, keepdims=True)
    eps = _op.const(epsilon, data.dtype)

    def fcompute(*i):
        return _affine(data[i] * _op.rsqrt(ms[_at_kept(i, axes)] + eps), i, axes, weight, None)

    return compute(data.shape, named(fcompute, axis_names("ax", len(data.shape))),
                   name="T_rms_norm")


def group_norm(data, gamma, beta, num_groups, channel_axis, axes, epsilon=1e-5):
    """Layer normalization within each of ``num_groups`` groups of channels (on
    ``channel_axis``), the statistics also over ``axes``; ``gamma``/``beta`` per channel."""
    ndim = len(data.shape)
    channel = normalize_axis(channel_axis, ndim, "group_norm")
    axes = _axes(axes, ndim, "group_norm")
    per_group = data.shape[channel] // num_groups
    kept = [x for x in range(ndim) if x != channel and x not in axes]
    dtype = data.dtype
    rc = reduce_axis((_op.const(0, per_group.dtype), per_group), name="rc")
    raxes = [reduce_axis((_op.const(0, data.shape[x].dtype), data.shape[x]), name=f"k{x}")
             for x in axes]
    count = _op.cast(per_group, dtype)
    for x in axes:
        count = count * _op.cast(data.shape[x], dtype)

    def source(idx, fvalue):
        """``fvalue`` at the element of group ``idx[-1]`` and reduction variables."""
        src = [None] * ndim
        for pos, x in enumerate(kept):
            src[x] = idx[pos]
        for x, r in zip(axes, raxes):
            src[x] = r.var
        src[channel] = idx[-1] * per_group + rc.var
        return fvalue(tuple(src))

    stat_shape = [data.shape[x] for x in kept] + [_op.const(num_groups, per_group.dtype)]
    names = axis_names("ax", len(stat_shape))
    total = compute(stat_shape, named(lambda *i: _te.sum(source(i, lambda s: data[s]),
                                                         axis=[rc] + raxes), names),
                    name="T_group_sum")

    def stat_at(i, tensor):
        return tensor[tuple(i[x] for x in kept) + (i[channel] // per_group,)]

    mean = compute(stat_shape, named(lambda *i: total[i] / count, names), name="T_group_mean")

    def deviation(s):
        d = data[s] - stat_at(s, mean)
        return d * d

    squares = compute(stat_shape, named(lambda *i: _te.sum(source(i, deviation),
                                                           axis=[rc] + raxes), names),
                      name="T_group_var_sum")
    eps = _op.const(epsilon, dtype)

    def fcompute(*i):
        normed = (data[i] - stat_at(i, mean)) * _op.rsqrt(stat_at(i, squares) / count + eps)
        return _affine(normed, i, [channel], gamma, beta)

    return compute(data.shape, named(fcompute, axis_names("ax", ndim)), name="T_group_norm")


def batch_norm(data, gamma, beta, moving_mean, moving_var, axis=1, epsilon=1e-5,
               center=True, scale=True, training=False, momentum=0.1):
    """Batch normalization over every axis but ``axis``; returns ``[out, mean, var]``: with
    ``training`` the batch statistics normalize and the moving ones are updated
    (``moving * (1 - momentum) + batch * momentum``), else the moving statistics normalize and
    come back as copies."""
    ndim = len(data.shape)
    axis = normalize_axis(axis, ndim, "batch_norm")
    others = [x for x in range(ndim) if x != axis]
    if training:
        mean, var = moments(data, others)
    else:
        mean, var = moving_mean, moving_var
    eps = _op.const(epsilon, data.dtype)

    def fcompute(*i):
        c = (i[axis],)
        normed = (data[i] - mean[c]) * _op.rsqrt(var[c] + eps)
        return _affine(normed, i, [axis], gamma if scale else None, beta if center else None)

    out = compute(data.shape, named(fcompute, axis_names("ax", ndim)), name="T_batch_norm")
    keep = _op.const(1 - momentum, data.dtype)
    take = _op.const(momentum, data.dtype)
    if training:
        new_mean = compute(mean.shape, lambda c: moving_mean[c] * keep + mean[c] * take,
                           name="T_moving_mean")
        new_var = compute(var.shape, lambda c: moving_var[c] * keep + var[c] * take,
                          name="T_moving_var")
    else:
        new_mean = compute(mean.shape, lambda c: mean[c], name="T_moving_mean")
        new_var = compute(var.shape, lambda c: var[c], name="T_moving_var")
    return [out, new_mean, new_var]
