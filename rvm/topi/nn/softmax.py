"""softmax and log_softmax along one axis, in the numerically stable form (subtract the max
first)."""
from rvm.tir import op as _op
from rvm.te import operation as _te
from rvm.te.operation import compute, reduce_axis
from rvm.topi.utils import axis_names, named, normalize_axis


class _Axis:
    """Index helpers for a reduction over one axis of ``x``."""

    def __init__(self, x, axis, what):
        self.x = x
        self.ndim = len(x.shape)
        self.axis = normalize_axis(axis, self.ndim, what)
        self.extent = x.shape[self.axis]
        self.reduced_shape = [d for k, d in enumerate(x.shape) if k != self.axis]
        self.reduced_names = [f"i{k}" for k in range(self.ndim) if k != self.axis]
        self.names = axis_names("i", self.ndim)

    def with_axis(self, idx, value):
        idx = list(idx)
        idx.insert(self.axis, value)
        return tuple(idx)

    def drop_axis(self, idx):
        return tuple(v for k, v in enumerate(idx) if k != self.axis)

    def reduce(self, reducer, fvalue, name):
        """``reducer`` over the axis of ``fvalue(full_index)``, a tensor of the reduced shape."""
        k = reduce_axis((_op.const(0, self.extent.dtype), self.extent), name="k")
        return compute(self.reduced_shape, named(
            lambda *i: reducer(fvalue(self.with_axis(i, k.var)), axis=k), self.reduced_names),
            name=name)


def softmax(x, axis=-1):
    """``exp(x - max) / sum(exp(x - max))`` along ``axis``.

    Four stages, as in TVM: T_softmax_maxelem, T_softmax_exp, T_softmax_expsum, T_softmax_norm.
    """
    ax = _Axis(x, axis, "softmax")
    maxelem = ax.reduce(_te.max, lambda i: x[i], "T_softmax_maxelem")
    exp = compute(x.shape, named(lambda *i: _op.exp(x[i] - maxelem[ax.drop_axis(i)]), ax.names),
                  name="T_softmax_exp")
    expsum = ax.reduce(_te.sum, lambda i: exp[i], "T_softmax_expsum")
    return compute(x.shape, named(lambda *i: exp[i] / expsum[ax.drop_axis(i)], ax.names),
                   name="T_softmax_norm")


def log_softmax(x, axis=-1):
    """``x - max - log(sum(exp(x - max)))`` along ``axis`` (stable, no log of a quotient).

    >>> from rvm.te.operation import placeholder
    >>> log_softmax(placeholder((2, 5), name="x")).name
    'T_log_softmax_norm'
    """
    ax = _Axis(x, axis, "log_softmax")
    maxelem = ax.reduce(_te.max, lambda i: x[i], "T_softmax_maxelem")
    expsum = ax.reduce(_te.sum, lambda i: _op.exp(x[i] - maxelem[ax.drop_axis(i)]),
                       "T_softmax_expsum")
    return compute(x.shape, named(
        lambda *i: x[i] - maxelem[ax.drop_axis(i)] - _op.log(expsum[ax.drop_axis(i)]),
        ax.names), name="T_log_softmax_norm")
