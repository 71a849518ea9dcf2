"""softmax and log_softmax along one axis, in the numerically stable form (subtract the max
first).

A narrow float (float16, bfloat16 ...) is computed as the operator's definition states it
in its own type: each stage (``x - max``, its ``exp``, the sum, the quotient) is rounded
to the type, the sum accumulating in float32 and rounded once (as the reductions of
``topi.reduction`` do). Kernels compute narrow floats in float32 and round where a value
is stored, so the rounding of a stage a schedule inlines is made explicit."""
from rvm.tir import op as _op
from rvm.te import operation as _te
from rvm.te.operation import compute, reduce_axis
from rvm.topi.utils import accumulation_dtype, axis_names, named, normalize_axis


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


class _Rounding:
    """Arithmetic on values of ``dtype``: for a narrow float computed in float32
    (``wide``) and rounded to ``dtype`` (``narrow``); for other types plain."""

    def __init__(self, dtype):
        self.dtype = str(dtype)
        self.acc = accumulation_dtype(self.dtype)

    def wide(self, value):
        return _op.cast(value, self.acc)

    def narrow(self, value):
        return _op.cast(value, self.dtype)


def softmax(x, axis=-1):
    """``exp(x - max) / sum(exp(x - max))`` along ``axis``.

    Four stages, as in TVM: T_softmax_maxelem, T_softmax_exp, T_softmax_expsum, T_softmax_norm.

    >>> from rvm.te.operation import placeholder
    >>> str(softmax(placeholder((2, 5), "float16", name="x")).dtype)
    'float16'
    """
    ax = _Axis(x, axis, "softmax")
    r = _Rounding(x.dtype)
    maxelem = ax.reduce(_te.max, lambda i: x[i], "T_softmax_maxelem")

    def fexp(*i):
        shifted = r.narrow(r.wide(x[i]) - r.wide(maxelem[ax.drop_axis(i)]))
        return r.narrow(_op.exp(r.wide(shifted)))

    exp = compute(x.shape, named(fexp, ax.names), name="T_softmax_exp")
    expsum = ax.reduce(_te.sum, lambda i: r.wide(exp[i]), "T_softmax_expsum")
    return compute(x.shape, named(
        lambda *i: r.narrow(r.wide(exp[i]) / r.wide(r.narrow(expsum[ax.drop_axis(i)]))),
        ax.names), name="T_softmax_norm")


def log_softmax(x, axis=-1):
    """``x - max - log(sum(exp(x - max)))`` along ``axis`` (stable, no log of a quotient).

    >>> from rvm.te.operation import placeholder
    >>> log_softmax(placeholder((2, 5), name="x")).name
    'T_log_softmax_norm'
    """
    ax = _Axis(x, axis, "log_softmax")
    r = _Rounding(x.dtype)
    maxelem = ax.reduce(_te.max, lambda i: x[i], "T_softmax_maxelem")
    expsum = ax.reduce(_te.sum, lambda i: r.wide(_op.exp(x[i] - maxelem[ax.drop_axis(i)])),
                       "T_softmax_expsum")
    return compute(x.shape, named(
        lambda *i: x[i] - maxelem[ax.drop_axis(i)] - r.narrow(_op.log(expsum[ax.drop_axis(i)])),
        ax.names), name="T_log_softmax_norm")
