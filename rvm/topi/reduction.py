"""Reductions over axes: sum, mean, max, min."""
from rvm.tir import op as _op
from rvm.te import operation as _te
from rvm.te.operation import compute, reduce_axis
from rvm.topi.utils import axis_names, named, normalize_axis


def _axes(axis, ndim, what):
    if axis is None:
        return list(range(ndim))
    if isinstance(axis, int):
        axis = [axis]
    axes = sorted({normalize_axis(x, ndim, what) for x in axis})
    return axes


def _reduce(data, axis, keepdims, reducer, what):
    ndim = len(data.shape)
    axes = _axes(axis, ndim, what)
    raxis = [reduce_axis((_op.const(0, data.shape[x].dtype), data.shape[x]), name=f"k{x}")
             for x in axes]
    kept = [x for x in range(ndim) if x not in axes]
    if keepdims:
        shape = [_op.const(1, data.shape[x].dtype) if x in axes else data.shape[x]
                 for x in range(ndim)]
    else:
        shape = [data.shape[x] for x in kept]

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
        return reducer(data[tuple(src)], axis=raxis)

    return compute(shape, named(fcompute, axis_names("ax", len(shape))),
                   name=f"{data.name}_red")


def sum(data, axis=None, keepdims=False):  # noqa: A001  (TVM's name)
    """The sum over ``axis`` (an int, a list, or None for all axes)."""
    return _reduce(data, axis, keepdims, _te.sum, "sum")


def max(data, axis=None, keepdims=False):  # noqa: A001  (TVM's name)
    """The maximum over ``axis``."""
    return _reduce(data, axis, keepdims, _te.max, "max")


def min(data, axis=None, keepdims=False):  # noqa: A001  (TVM's name)
    """The minimum over ``axis``."""
    return _reduce(data, axis, keepdims, _te.min, "min")


def mean(data, axis=None, keepdims=False):
    """The arithmetic mean over ``axis`` (sum divided by the number of elements reduced)."""
    total = sum(data, axis, keepdims)
    count = _op.const(1, data.shape[0].dtype if data.shape else "int32")
    for x in _axes(axis, len(data.shape), "mean"):
        count = _op.multiply(count, data.shape[x])
    return compute(total.shape, named(lambda *i: _op.div(total[i], _op.cast(count, data.dtype)),
                                      axis_names("ax", len(total.shape))), name="T_divide")
