"""Joining, splitting and repeating tensors along axes: concatenate, split, tile, repeat."""
from rvm.tir import op as _op
from rvm.tir.arith import simplify_size
from rvm.te.operation import compute
from rvm.topi.transform import ravel
from rvm.topi.utils import axis_names, const_value, named, normalize_axis


def concatenate(tensors, axis=0):
    """``tensors`` joined along ``axis`` (all other dimensions equal).

    >>> from rvm.te.operation import placeholder
    >>> out = concatenate([placeholder((2, 3), name="A"), placeholder((4, 3), name="B")])
    >>> [d.value for d in out.shape]
    [6, 3]
    """
    tensors = list(tensors)
    if not tensors:
        raise ValueError("concatenate expects at least one tensor")
    ndim = len(tensors[0].shape)
    axis = normalize_axis(axis, ndim, "concatenate")
    offsets = [_op.const(0, tensors[0].shape[axis].dtype)]
    for t in tensors:
        if len(t.shape) != ndim:
            raise ValueError(f"concatenate: tensors of ranks {ndim} and {len(t.shape)}")
        offsets.append(simplify_size(offsets[-1] + t.shape[axis]))
    shape = list(tensors[0].shape)
    shape[axis] = offsets[-1]

    def fcompute(*i):
        value = None
        for k in reversed(range(len(tensors))):
            t, start, end = tensors[k], offsets[k], offsets[k + 1]
            idx = list(i)
            # clamped, so reading the tensors that are not selected stays in bounds
            local = _op.min(i[axis] - start, t.shape[axis] - 1)
            idx[axis] = _op.max(local, _op.const(0, local.dtype))
            item = t[tuple(idx)]
            value = item if value is None else _op.if_then_else(i[axis] < end, item, value)
        return value

    return compute(shape, named(fcompute, axis_names("ax", ndim)), name="T_concat")


def split_bounds(length, indices_or_sections, what="split"):
    """The ``(begin, extent)`` of each part when an axis of ``length`` is cut at
    ``indices_or_sections``: a list of ascending cut points, or a number of sections of
    ``ceil(length / sections)`` elements each (the last gets the rest).

    A constant ``length`` is split as numpy does (cut points clamped to the axis,
    trailing parts maybe empty). A symbolic one is split as TVM does, with the
    cut points assumed inside the axis: a shorter axis makes the last extent
    negative, which the VM rejects when it allocates the output.
    """
    dtype = length.dtype
    if isinstance(indices_or_sections, int):
        sections = indices_or_sections
        if sections <= 0:
            raise ValueError(f"{what}: the number of sections must be positive, got {sections}")
        step = simplify_size(_op.floordiv(length + (sections - 1), _op.const(sections, dtype)))
        points = [simplify_size(step * k) for k in range(sections)]
    else:
        points = [_op.const(0, dtype)] + [_op.convert(c, dtype) for c in indices_or_sections]
    points.append(length)
    if const_value(length) is not None:
        points = [_op.min(p, length) for p in points]
    bounds = []
    for begin, end in zip(points, points[1:]):
        extent = end - begin
        if const_value(length) is not None:
            extent = _op.max(extent, _op.const(0, dtype))
        bounds.append((simplify_size(begin), simplify_size(extent)))
    return bounds


def split(a, indices_or_sections, axis=0):
    """The parts of ``a`` cut along ``axis`` (see ``split_bounds``); a list of tensors.

    >>> from rvm.te.operation import placeholder
    >>> [[d.value for d in t.shape] for t in split(placeholder((7, 2), name="A"), 3)]
    [[3, 2], [3, 2], [1, 2]]
    """
    ndim = len(a.shape)
    axis = normalize_axis(axis, ndim, "split")
    outs = []
    for k, (begin, extent) in enumerate(split_bounds(a.shape[axis], indices_or_sections)):
        shape = list(a.shape)
        shape[axis] = extent

        def fcompute(*i, begin=begin):
            idx = list(i)
            idx[axis] = i[axis] + begin
            return a[tuple(idx)]

        outs.append(compute(shape, named(fcompute, axis_names("ax", ndim)), name=f"T_split_{k}"))
    return outs


def tile(a, reps):
    """``a`` repeated ``reps[k]`` times along each axis (numpy.tile); the shorter of the rank
    and ``reps`` is padded with leading 1s.

    >>> from rvm.te.operation import placeholder
    >>> [d.value for d in tile(placeholder((2, 3), name="A"), (2,)).shape]
    [2, 6]
    """
    reps = [int(r) for r in reps]
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: repeats must be non-negative, got {reps}")
    ndim = max(len(a.shape), len(reps))
    index_dtype = a.shape[0].dtype if a.shape else "int64"
    src_shape = [_op.const(1, index_dtype)] * (ndim - len(a.shape)) + list(a.shape)
    reps = [1] * (ndim - len(reps)) + reps
    shape = [simplify_size(d * r) for d, r in zip(src_shape, reps)]
    offset = ndim - len(a.shape)

    def fcompute(*i):
        return a[tuple(i[offset + k] if reps[offset + k] == 1 else
                       _op.floormod(i[offset + k], a.shape[k]) for k in range(len(a.shape)))]

    return compute(shape, named(fcompute, axis_names("ax", ndim)), name="T_tile")


def repeat(a, repeats, axis=None):
    """Each element of ``a`` repeated ``repeats`` times along ``axis`` (numpy.repeat; None:
    along the flattened ``a``).

    >>> from rvm.te.operation import placeholder
    >>> [d.value for d in repeat(placeholder((2, 3), name="A"), 2, 1).shape]
    [2, 6]
    """
    repeats = int(repeats)
    if repeats < 0:
        raise ValueError(f"repeat: repeats must be non-negative, got {repeats}")
    if axis is None:  # numpy: the flattened tensor
        a, axis = ravel(a), 0
    ndim = len(a.shape)
    axis = normalize_axis(axis, ndim, "repeat")
    shape = list(a.shape)
    shape[axis] = simplify_size(shape[axis] * repeats)

    def fcompute(*i):
        idx = list(i)
        if repeats != 1:
            idx[axis] = _op.floordiv(i[axis], _op.const(repeats, i[axis].dtype))
        return a[tuple(idx)]

    return compute(shape, named(fcompute, axis_names("ax", ndim)), name="T_repeat")
