"""Layout transformations: reshape and transpose."""
from rvm.tir import op as _op
from rvm.tir.arith import simplify_size
from rvm.te.operation import compute
from rvm.topi import tag
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
            # a tensor with a zero-sized axis has no element to read: any divisor will do
            d = _op.const(1, d.dtype) if const_value(d) == 0 else d
            src.append(_op.floormod(flat, d))
            flat = _op.floordiv(flat, d)
        return a[tuple(reversed(src))]

    return compute(shape, named(fcompute, axis_names("ax", len(shape))), name="T_reshape",
                   tag=tag.INJECTIVE)


def ravel(a):
    """``a`` as a rank-1 tensor, row-major (numpy.ravel).

    >>> from rvm.te.operation import placeholder
    >>> [d.value for d in ravel(placeholder((2, 3), name="A")).shape]
    [6]
    """
    total = _op.const(1, a.shape[0].dtype if a.shape else "int64")
    for d in a.shape:
        total = total * d
    return reshape(a, [simplify_size(total)])


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

    return compute(shape, named(fcompute, axis_names("ax", ndim)), name="T_transpose",
                   tag=tag.INJECTIVE)


def expand_dims(a, axis, num_newaxis=1):
    """``a`` with ``num_newaxis`` axes of size 1 inserted at ``axis`` (an int in
    ``[-ndim-1, ndim]``, TVM's topi form) or at each of ``axis`` (a list of output positions,
    Relax's form).

    >>> from rvm.te.operation import placeholder
    >>> [d.value for d in expand_dims(placeholder((2, 3), name="A"), [0, 3]).shape]
    [1, 2, 3, 1]
    """
    ndim = len(a.shape)
    if isinstance(axis, (list, tuple)):
        out_ndim = ndim + len(axis)
        new = sorted(normalize_axis(x, out_ndim, "expand_dims") for x in axis)
    else:
        axis = normalize_axis(axis, ndim + 1, "expand_dims")
        new = list(range(axis, axis + num_newaxis))
        out_ndim = ndim + num_newaxis
    if len(set(new)) != len(new):
        raise ValueError(f"expand_dims: repeated axes in {axis}")
    index_dtype = a.shape[0].dtype if a.shape else "int64"
    kept = [x for x in range(out_ndim) if x not in new]
    shape = [_op.const(1, index_dtype)] * out_ndim
    for src, x in enumerate(kept):
        shape[x] = a.shape[src]

    def fcompute(*idx):
        return a[tuple(idx[x] for x in kept)]

    return compute(shape, named(fcompute, axis_names("ax", out_ndim)), name="T_expand_dims",
                   tag=tag.INJECTIVE)


def squeeze(a, axis=None):
    """``a`` without the axes of size 1 listed in ``axis`` (None: every constant 1).

    >>> from rvm.te.operation import placeholder
    >>> [d.value for d in squeeze(placeholder((1, 3, 1), name="A")).shape]
    [3]
    """
    ndim = len(a.shape)
    if axis is None:
        dropped = [x for x in range(ndim) if const_value(a.shape[x]) == 1]
    else:
        axis = [axis] if isinstance(axis, int) else axis
        dropped = [normalize_axis(x, ndim, "squeeze") for x in axis]
        for x in dropped:
            if const_value(a.shape[x]) not in (None, 1):
                raise ValueError(f"squeeze: axis {x} has size {const_value(a.shape[x])}, "
                                 "expected 1")
    kept = [x for x in range(ndim) if x not in dropped]
    index_dtype = a.shape[0].dtype if a.shape else "int64"

    def fcompute(*idx):
        src = [_op.const(0, index_dtype)] * ndim
        for out_pos, x in enumerate(kept):
            src[x] = idx[out_pos]
        return a[tuple(src)]

    return compute([a.shape[x] for x in kept], named(fcompute, axis_names("ax", len(kept))),
                   name="T_squeeze", tag=tag.INJECTIVE)


def broadcast_to(data, shape):
    """``data`` repeated along its size-1 (or missing leading) axes to ``shape``.

    >>> from rvm.te.operation import placeholder
    >>> [d.value for d in broadcast_to(placeholder((3, 1), name="A"), (2, 3, 4)).shape]
    [2, 3, 4]
    """
    from rvm.topi.broadcast import broadcast_index

    index_dtype = data.shape[0].dtype if data.shape else "int64"
    shape = [_op.convert(d, index_dtype) for d in shape]
    if len(shape) < len(data.shape):
        raise ValueError(f"broadcast_to: cannot broadcast a rank-{len(data.shape)} tensor to "
                         f"rank {len(shape)}")
    offset = len(shape) - len(data.shape)
    for k, d in enumerate(data.shape):
        src, dst = const_value(d), const_value(shape[offset + k])
        if src not in (None, 1) and dst is not None and src != dst:
            raise ValueError(f"broadcast_to: dimension {k} of size {src} cannot become {dst}")
    return compute(shape, named(lambda *i: broadcast_index(data, shape, i),
                                axis_names("ax", len(shape))), name="T_broadcast_to",
                   tag=tag.BROADCAST)
