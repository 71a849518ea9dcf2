"""softmax along one axis, in the numerically stable form (subtract the max first)."""
from rvm.tir import op as _op
from rvm.te import operation as _te
from rvm.te.operation import compute, reduce_axis
from rvm.topi.utils import axis_names, named, normalize_axis


def softmax(x, axis=-1):
    """``exp(x - max) / sum(exp(x - max))`` along ``axis``.

    Four stages, as in TVM: T_softmax_maxelem, T_softmax_exp, T_softmax_expsum, T_softmax_norm.
    """
    ndim = len(x.shape)
    axis = normalize_axis(axis, ndim, "softmax")
    extent = x.shape[axis]
    reduced_shape = [d for k, d in enumerate(x.shape) if k != axis]
    reduced_names = [f"i{k}" for k in range(ndim) if k != axis]

    def with_axis(idx, value):
        idx = list(idx)
        idx.insert(axis, value)
        return tuple(idx)

    k1 = reduce_axis((_op.const(0, extent.dtype), extent), name="k")
    maxelem = compute(reduced_shape, named(
        lambda *i: _te.max(x[with_axis(i, k1.var)], axis=k1), reduced_names),
        name="T_softmax_maxelem")

    def drop_axis(idx):
        return tuple(v for k, v in enumerate(idx) if k != axis)

    names = axis_names("i", ndim)
    exp = compute(x.shape, named(lambda *i: _op.exp(x[i] - maxelem[drop_axis(i)]), names),
                  name="T_softmax_exp")
    k2 = reduce_axis((_op.const(0, extent.dtype), extent), name="k")
    expsum = compute(reduced_shape, named(
        lambda *i: _te.sum(exp[with_axis(i, k2.var)], axis=k2), reduced_names),
        name="T_softmax_expsum")
    return compute(x.shape, named(lambda *i: exp[i] / expsum[drop_axis(i)], names),
                   name="T_softmax_norm")
