"""Compute definitions that LegalizeOps needs and ``topi`` does not provide.

Comparisons with broadcasting, ``rsqrt``, ``gelu``, ``silu``, ``log_softmax``
and ``concat``, written with ``te.compute`` on top of topi's helpers.
"""
from rvm.te.operation import compute
from rvm.tir import op as tir_op
from rvm.topi.broadcast import broadcast_index, broadcast_shape
from rvm.topi.elemwise import log
from rvm.topi.nn.softmax import softmax
from rvm.topi.utils import axis_names, named, normalize_axis


def _elementwise(x, name, fop):
    return compute(x.shape, named(lambda *i: fop(x[i]), axis_names("i", len(x.shape))),
                   name=f"T_{name}")


def comparison(name):
    """A broadcasting comparison ``name`` (equal, less, ...) with a bool result."""
    fop = getattr(tir_op, name)

    def build(lhs, rhs):
        shape = broadcast_shape(lhs.shape, rhs.shape, name)

        def fcompute(*i):
            return fop(broadcast_index(lhs, shape, i), broadcast_index(rhs, shape, i))

        return compute(shape, named(fcompute, axis_names("ax", len(shape))), name=f"T_{name}")

    build.__name__ = name
    return build


def rsqrt(x):
    """``1 / sqrt(x)`` elementwise."""
    return _elementwise(x, "rsqrt", tir_op.rsqrt)


def gelu(x):
    """``0.5 * x * (1 + erf(x / sqrt(2)))`` elementwise."""
    half = tir_op.const(0.5, x.dtype)
    inv_sqrt2 = tir_op.const(0.7071067811865476, x.dtype)
    one = tir_op.const(1.0, x.dtype)
    return _elementwise(x, "gelu", lambda v: half * v * (one + tir_op.erf(v * inv_sqrt2)))


def silu(x):
    """``x * sigmoid(x)`` elementwise."""
    return _elementwise(x, "silu", lambda v: v * tir_op.sigmoid(v))


def log_softmax(x, axis=-1):
    """``log(softmax(x))`` along ``axis``."""
    return log(softmax(x, axis))


def concat(tensors, axis=0):
    """``tensors`` joined along ``axis`` (all other dimensions equal)."""
    tensors = list(tensors)
    ndim = len(tensors[0].shape)
    axis = normalize_axis(axis, ndim, "concat")
    offsets = [tir_op.const(0, tensors[0].shape[axis].dtype)]
    for t in tensors:
        offsets.append(offsets[-1] + t.shape[axis])
    shape = list(tensors[0].shape)
    shape[axis] = offsets[-1]

    def fcompute(*i):
        value = None
        for k in reversed(range(len(tensors))):
            t, start, end = tensors[k], offsets[k], offsets[k + 1]
            idx = list(i)
            # clamped, so reading the tensors that are not selected stays in bounds
            local = tir_op.min(i[axis] - start, t.shape[axis] - 1)
            idx[axis] = tir_op.max(local, tir_op.const(0, local.dtype))
            item = t[tuple(idx)]
            value = item if value is None else tir_op.if_then_else(i[axis] < end, item, value)
        return value

    return compute(shape, named(fcompute, axis_names("ax", ndim)), name="T_concat")
