"""Layout transformations: reshape and transpose."""
from rvm.tir import op as _op
from rvm.te.operation import compute
from rvm.topi.utils import axis_names, const_value, named, normalize_axis


def _infer_shape(old_shape, newshape):
    newshape = list(newshape)
    unknown = [k for k, d in enumerate(newshape) if const_value(d) == -1]
    if len(unknown) > 1:
        raise ValueError(f"reshape: at most one -1 allowed in the new shape, got {newshape}")
    if unknown:
        total = 1
        for d in old_shape:
            if const_value(d) is None:
                raise ValueError("reshape: -1 needs a constant input shape, got a symbolic one")
            total *= const_value(d)
        known = 1
        for k, d in enumerate(newshape):
            if k != unknown[0]:
                if const_value(d) is None:
                    raise ValueError("reshape: -1 needs the other new dimensions constant")
                known *= const_value(d)
        if known == 0 or total % known:
            raise ValueError(f"reshape: cannot reshape {total} elements into {newshape}")
        newshape[unknown[0]] = total // known
    old_total = _product(old_shape)
    new_total = _product(newshape)
    if old_total is not None and new_total is not None and old_total != new_total:
        raise ValueError(f"reshape: cannot reshape {old_total} elements into {new_total}")
    return newshape


def _product(shape):
    total = 1
    for d in shape:
        if const_value(d) is None:
            return None
        total *= const_value(d)
    return total


def reshape(a, newshape):
    """``a`` with the same elements, row-major, in ``newshape`` (one -1 may be inferred).

    >>> from rvm.te.operation import placeholder
    >>> [d.value for d in reshape(placeholder((2, 6), name="A"), (3, -1)).shape]
    [3, 4]
    """
    shape = _infer_shape(a.shape, newshape)
    index_dtype = a.shape[0].dtype if a.shape else "int32"
    shape = [_op.convert(d, index_dtype) for d in shape]

    def fcompute(*idx):
        flat = _op.const(0, index_dtype)
        for i, d in zip(idx, shape):
            flat = _op.add(_op.multiply(flat, d), i)
        src = []
        for d in reversed(a.shape):
            src.append(_op.floormod(flat, d))
            flat = _op.floordiv(flat, d)
        return a[tuple(reversed(src))]

    return compute(shape, named(fcompute, axis_names("ax", len(shape))), name="T_reshape")


def transpose(a, axes=None):
    """``a`` with its axes permuted (reversed when ``axes`` is None).

    >>> from rvm.te.operation import placeholder
    >>> [d.value for d in transpose(placeholder((2, 3, 4), name="A"), (1, 0, 2)).shape]
    [3, 2, 4]
    """
    ndim = len(a.shape)
    axes = list(reversed(range(ndim))) if axes is None else [normalize_axis(x, ndim, "transpose")
                                                             for x in axes]
    if sorted(axes) != list(range(ndim)):
        raise ValueError(f"transpose: axes {axes} are not a permutation of {list(range(ndim))}")
    shape = [a.shape[x] for x in axes]

    def fcompute(*idx):
        src = [None] * ndim
        for out_pos, x in enumerate(axes):
            src[x] = idx[out_pos]
        return a[tuple(src)]

    return compute(shape, named(fcompute, axis_names("ax", ndim)), name="T_transpose")
