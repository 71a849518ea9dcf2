"""Scans: cumsum and cumprod along an axis, as a sequential loop (one pass, not a quadratic
sum of prefixes): ``out[k] = out[k - 1] + x[k]``.

>>> from rvm.te.operation import placeholder
>>> [d.value for d in cumsum(placeholder((2, 3), name="x"), axis=1).shape]
[2, 3]
"""
from rvm.tir import op as _op
from rvm.tir.expr import Var
from rvm.tir.stmt import BufferStore, For, IfThenElse, stmt_seq
from rvm.te.operation import extern
from rvm.topi.transform import ravel
from rvm.topi.utils import normalize_axis


def _scan(data, axis, dtype, exclusive, combine, identity, name):
    if axis is None:  # numpy: the flattened tensor
        data, axis = ravel(data), 0
    ndim = len(data.shape)
    axis = normalize_axis(axis, ndim, name)
    dtype = dtype or data.dtype

    def body(ins, outs):
        src, out = ins[0], outs[0]
        outer = [Var(f"i{x}", data.shape[x].dtype) for x in range(axis)]
        extent = data.shape[axis]
        k = Var(f"i{axis}", extent.dtype)

        def load(buf, idx):
            return _op.cast(buf.vload(idx), dtype)

        def over_inner(make_store):
            """``make_store(inner loop vars)`` inside loops over the axes after ``axis``."""
            inner = [Var(f"i{x}", data.shape[x].dtype) for x in range(axis + 1, ndim)]
            stmt = make_store(inner)
            for var, x in reversed(list(zip(inner, range(axis + 1, ndim)))):
                stmt = For(var, _op.const(0, var.dtype), data.shape[x], "serial", stmt)
            return stmt

        def first_store(inner):
            idx = outer + [_op.const(0, k.dtype)] + inner
            value = _op.const(identity, dtype) if exclusive else load(src, idx)
            return BufferStore(out, value, idx)

        def step_store(inner):
            here, prev = outer + [k] + inner, outer + [k - 1] + inner
            return BufferStore(out, combine(out.vload(prev), load(src, prev if exclusive
                                                                   else here)), here)

        scan = For(k, _op.const(1, k.dtype), extent - 1, "serial", over_inner(step_store))
        stmt = IfThenElse(extent > _op.const(0, extent.dtype),
                          stmt_seq(over_inner(first_store), scan))
        for var, x in reversed(list(zip(outer, range(axis)))):
            stmt = For(var, _op.const(0, var.dtype), data.shape[x], "serial", stmt)
        return stmt

    return extern(data.shape, [data], body, name=f"T_{name}", dtype=dtype)


def cumsum(data, axis=None, dtype=None, exclusive=False):
    """Cumulative sums along ``axis`` (None: the flattened tensor), in ``dtype`` (default:
    the data's); ``exclusive`` starts from 0 and leaves each element out of its own sum."""
    return _scan(data, axis, dtype, exclusive, _op.add, 0, "cumsum")


def cumprod(data, axis=None, dtype=None, exclusive=False):
    """Cumulative products along ``axis``, like ``cumsum``; ``exclusive`` starts from 1."""
    return _scan(data, axis, dtype, exclusive, _op.multiply, 1, "cumprod")
