"""Reductions over axes: sum, prod, max, min, mean, variance, std, argmax, argmin.

Each is one reduction block with an init (TVM's form); float max/min start
from -inf/+inf, so a tensor of infinities reduces to them. Sums and products of narrow
floats (float16, bfloat16 ...) accumulate in float32 and are rounded once at the end.
"""
import math

from rvm.tir import op as _op
from rvm.te import operation as _te
from rvm.te.operation import compute, reduce_axis
from rvm.topi import tag
from rvm.topi.utils import accumulation_dtype, axis_names, named, narrowed, normalize_axis


def _axes(axis, ndim, what):
    if axis is None:
        return list(range(ndim))
    if isinstance(axis, int):
        axis = [axis]
    return sorted({normalize_axis(x, ndim, what) for x in axis})


def _reduce(data, axis, keepdims, reducer, what, fsource=None, name=None, init=None):
    """``reducer`` over ``axis`` of ``fsource(data indices)`` (default: the element)."""
    ndim = len(data.shape)
    axes = _axes(axis, ndim, what)
    raxis = [reduce_axis((_op.const(0, data.shape[x].dtype), data.shape[x]), name=f"k{x}")
             for x in axes]
    if keepdims:
        shape = [_op.const(1, data.shape[x].dtype) if x in axes else data.shape[x]
                 for x in range(ndim)]
    else:
        shape = [data.shape[x] for x in range(ndim) if x not in axes]
    fsource = fsource or (lambda idx, out: data[idx])

    def fcompute(*idx):
        src = []
        rk = iter(raxis)
        out = iter(idx)
        for x in range(ndim):
            if x in axes:
                src.append(next(rk).var)
                if keepdims:
                    next(out)
            else:
                src.append(next(out))
        return reducer(fsource(tuple(src), idx), axis=raxis, init=init)

    return compute(shape, named(fcompute, axis_names("ax", len(shape))),
                   name=name or f"{data.name}_red", tag=tag.COMM_REDUCE)


def _extreme_init(dtype, sign):
    return _op.const(sign * math.inf, dtype) if dtype.is_float else None


def _accumulated(data, axis, keepdims, reducer, what):
    """The reduction over ``axis`` in the accumulation type of ``data``'s dtype."""
    acc = accumulation_dtype(data.dtype)
    if acc == str(data.dtype):
        return _reduce(data, axis, keepdims, reducer, what)
    return _reduce(data, axis, keepdims, reducer, what,
                   fsource=lambda idx, out: _op.cast(data[idx], acc))


def sum(data, axis=None, keepdims=False):  # noqa: A001  (TVM's name)
    """The sum over ``axis`` (an int, a list, or None for all axes)."""
    total = _accumulated(data, axis, keepdims, _te.sum, "sum")
    return narrowed(total, data.dtype, f"{total.name}_{data.dtype}")


def prod(data, axis=None, keepdims=False):
    """The product over ``axis``."""
    total = _accumulated(data, axis, keepdims, _te.prod, "prod")
    return narrowed(total, data.dtype, f"{total.name}_{data.dtype}")


def max(data, axis=None, keepdims=False):  # noqa: A001  (TVM's name)
    """The maximum over ``axis``."""
    return _reduce(data, axis, keepdims, _te.max, "max", init=_extreme_init(data.dtype, -1))


def min(data, axis=None, keepdims=False):  # noqa: A001  (TVM's name)
    """The minimum over ``axis``."""
    return _reduce(data, axis, keepdims, _te.min, "min", init=_extreme_init(data.dtype, 1))


def _count(data, axis, dtype=None):
    count = _op.const(1, data.shape[0].dtype if data.shape else "int64")
    for x in _axes(axis, len(data.shape), "mean"):
        count = _op.multiply(count, data.shape[x])
    return _op.cast(count, dtype or data.dtype)


def mean(data, axis=None, keepdims=False):
    """The arithmetic mean over ``axis`` (sum divided by the number of elements reduced)."""
    total = _accumulated(data, axis, keepdims, _te.sum, "sum")
    count = _count(data, axis, total.dtype)
    avg = compute(total.shape, named(lambda *i: _op.div(total[i], count),
                                     axis_names("ax", len(total.shape))), name="T_divide")
    return narrowed(avg, data.dtype, f"T_divide_{data.dtype}")


def moments(data, axis=None, keepdims=False):
    """The mean and the population variance over ``axis`` (two passes: the mean, then the
    mean of squared deviations from it), as two tensors."""
    axes = _axes(axis, len(data.shape), "moments")
    avg = mean(data, axis, keepdims=True)

    def deviation(idx, out):
        d = data[idx] - avg[tuple(_op.const(0, i.dtype) if x in axes else i
                                  for x, i in enumerate(idx))]
        return d * d

    squares = _reduce(data, axis, keepdims, _te.sum, "variance", deviation,
                      name="T_variance_sum")
    count = _count(data, axis)
    var = compute(squares.shape, named(lambda *i: _op.div(squares[i], count),
                                       axis_names("ax", len(squares.shape))), name="T_variance")
    if keepdims:
        return avg, var
    kept = [x for x in range(len(data.shape)) if x not in axes]

    def drop(*i):
        src = [_op.const(0, d.dtype) for d in data.shape]
        for pos, x in enumerate(kept):
            src[x] = i[pos]
        return avg[tuple(src)]

    return compute(var.shape, named(drop, axis_names("ax", len(var.shape))), name="T_mean"), var


def variance(data, axis=None, keepdims=False):
    """The population variance over ``axis``: the mean of squared deviations from the mean
    (two passes, as TVM legalizes relax.variance)."""
    return moments(data, axis, keepdims)[1]


def std(data, axis=None, keepdims=False):
    """The population standard deviation over ``axis``."""
    var = variance(data, axis, keepdims)
    return compute(var.shape, named(lambda *i: _op.sqrt(var[i]), axis_names("ax", len(var.shape))),
                   name="T_std")


def _arg_extreme(data, axis, keepdims, pick, what):
    """The first index along ``axis`` (None: of the flattened tensor) of the extreme value,
    in int64; a NaN counts as the extreme, as in numpy."""
    ndim = len(data.shape)
    axes = _axes(axis, ndim, what)
    sign = -1 if pick == "max" else 1
    best = _reduce(data, axis, True, getattr(_te, pick), what,
                   init=_extreme_init(data.dtype, sign), name=f"T_{what}_value")
    extent = _op.const(1, "int64")
    for x in axes:
        extent = extent * _op.cast(data.shape[x], "int64")

    def flat_index(idx):
        flat = _op.const(0, "int64")
        for x in axes:
            flat = flat * _op.cast(data.shape[x], "int64") + _op.cast(idx[x], "int64")
        return flat

    def best_at(idx):
        return best[tuple(_op.const(0, i.dtype) if x in axes else i for x, i in enumerate(idx))]

    def candidate(idx, out):
        return _op.if_then_else(_op.equal(data[idx], best_at(idx)), flat_index(idx), extent)

    first = _reduce(data, axis, keepdims, _te.min, what, candidate, name=f"T_{what}_first")
    if not data.dtype.is_float:
        return first

    def first_nan(idx, out):
        return _op.if_then_else(_op.isnan(data[idx]), flat_index(idx), extent)

    nan = _reduce(data, axis, keepdims, _te.min, what, first_nan, name=f"T_{what}_nan")
    # the first NaN wins over an equal-to-best element before it
    return compute(first.shape, named(
        lambda *i: _op.if_then_else(nan[i] < extent, nan[i], first[i]),
        axis_names("ax", len(first.shape))), name=f"T_{what}")


def argmax(data, axis=None, keepdims=False):
    """The index of the first maximum along ``axis`` (None: of the flattened tensor)."""
    return _arg_extreme(data, axis, keepdims, "max", "argmax")


def argmin(data, axis=None, keepdims=False):
    """The index of the first minimum along ``axis`` (None: of the flattened tensor)."""
    return _arg_extreme(data, axis, keepdims, "min", "argmin")
