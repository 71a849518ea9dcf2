"""Indexing: take (gather along an axis), gather_elements (torch's gather) and
strided_slice (numpy's basic slicing).

``take`` clamps (``mode="clip"``) or wraps (``mode="wrap"``) its indices; in
``mode="fast"`` (the default), as ``gather_elements`` always, a negative index
counts from the end (as numpy reads it) and an index outside ``[-n, n)`` fails
the kernel with an IndexError naming the index, the range and the axis
(``tir.check_index``). Every read stays inside the source tensor whatever the
indices, and ``strided_slice`` clamps its bounds as Python slices do.
"""
from rvm.tir import op as _op
from rvm.tir.arith import simplify_size
from rvm.te.operation import compute
from rvm.topi.transform import ravel
from rvm.topi.utils import axis_names, named, normalize_axis

_MODES = ("fast", "clip", "wrap")


def _index_in(index, extent, mode, what=None):
    """``index`` (any int dtype) as an in-bounds int64 index into an axis of ``extent``; in
    mode "fast", an index outside ``[-extent, extent)`` fails the kernel with ``what``
    (``"take ... along axis 0"``: the op's name, then where) around the index and range."""
    i = _op.cast(index, "int64")
    n = _op.cast(extent, "int64")
    zero, one = _op.const(0, "int64"), _op.const(1, "int64")
    if mode == "wrap":
        return _op.floormod(i, n)
    if mode == "fast":
        op_name, where = what
        i = _op.check_index(i, -n, n, f"{op_name}: index {{}} out of range [{{}}, {{}}) {where}")
        i = _op.if_then_else(i < zero, i + n, i)
    # The clamp never changes a checked index: it keeps reads in bounds for the prover
    return _op.max(_op.min(i, n - one), zero)


def take(a, indices, axis=None, mode="fast"):
    """Elements of ``a`` at ``indices`` along ``axis`` (None: of the flattened ``a``); the
    result's shape is ``a.shape[:axis] + indices.shape + a.shape[axis + 1:]``.

    >>> from rvm.te.operation import placeholder
    >>> w = placeholder((10, 4), name="w")
    >>> [d.value for d in take(w, placeholder((2, 3), "int64", name="i"), axis=0).shape]
    [2, 3, 4]
    """
    if mode not in _MODES:
        raise ValueError(f"take: mode must be one of {_MODES}, got {mode!r}")
    if axis is None:  # numpy: the flattened tensor
        a, axis = ravel(a), 0
    ndim = len(a.shape)
    axis = normalize_axis(axis, ndim, "take")
    k = len(indices.shape)
    shape = list(a.shape[:axis]) + list(indices.shape) + list(a.shape[axis + 1:])

    def fcompute(*i):
        where = _index_in(indices[tuple(i[axis:axis + k])], a.shape[axis], mode,
                          ("take", f"along axis {axis}"))
        return a[tuple(i[:axis]) + (_op.cast(where, a.shape[axis].dtype),) + tuple(i[axis + k:])]

    return compute(shape, named(fcompute, axis_names("ax", len(shape))), name="T_take")


def gather_elements(a, indices, axis=0):
    """``out[i] = a[i with i[axis] replaced by indices[i]]`` (torch's ``gather``, ONNX's
    GatherElements); ``indices`` has ``a``'s rank and the result its shape. An index is
    read from the end when negative; one outside ``[-n, n)`` fails the kernel.

    >>> from rvm.te.operation import placeholder
    >>> w = placeholder((10, 4), name="w")
    >>> [d.value for d in gather_elements(w, placeholder((3, 4), "int64", name="i")).shape]
    [3, 4]
    """
    ndim = len(a.shape)
    if len(indices.shape) != ndim:
        raise ValueError(f"gather_elements: indices must have the rank of the data ({ndim}), "
                         f"got rank {len(indices.shape)}")
    axis = normalize_axis(axis, ndim, "gather_elements")

    def fcompute(*i):
        where = _index_in(indices[i], a.shape[axis], "fast",
                          ("gather_elements", f"along axis {axis}"))
        return a[tuple(i[:axis]) + (_op.cast(where, a.shape[axis].dtype),) + tuple(i[axis + 1:])]

    return compute(list(indices.shape), named(fcompute, axis_names("ax", ndim)),
                   name="T_gather_elements")


def slice_bounds(dim, begin, end, stride, assume_inbound=False):
    """``(start, extent)`` of the Python slice ``begin:end:stride`` of an axis of ``dim``
    elements; bounds are clamped to the axis unless ``assume_inbound``, and a negative int
    bound counts from the end."""
    dtype = dim.dtype
    if stride == 0:
        raise ValueError("strided_slice: a stride must not be 0")

    def bound(value, low, high):
        value = _op.convert(value, dtype) if not isinstance(value, int) else value
        if isinstance(value, int):
            if value < 0:
                value = _op.const(value, dtype) + dim
            else:
                value = _op.const(min(value, 2 ** 62), dtype)
        if assume_inbound:
            return value
        return _op.max(_op.min(value, high), low)

    zero, minus_one = _op.const(0, dtype), _op.const(-1, dtype)
    if stride > 0:
        start, stop = bound(begin, zero, dim), bound(end, zero, dim)
        span = _op.max(stop - start, zero)
    else:
        start, stop = bound(begin, minus_one, dim - 1), bound(end, minus_one, dim - 1)
        span = _op.max(start - stop, zero)
    step = abs(stride)
    extent = span if step == 1 else _op.floordiv(span + (step - 1), _op.const(step, dtype))
    return simplify_size(start), simplify_size(extent)


def strided_slice(a, begin, end, strides=None, axes=None, assume_inbound=False):
    """``a[begin:end:strides]`` on ``axes`` (default: the leading axes), numpy's basic
    slicing; ``end`` beyond the axis (like ``2 ** 63 - 1``) means up to its end.

    >>> from rvm.te.operation import placeholder
    >>> x = placeholder((8, 9), name="x")
    >>> [d.value for d in strided_slice(x, [1, -1], [8, 0], [2, -3]).shape]
    [4, 3]
    """
    axes = list(range(len(begin))) if axes is None else list(axes)
    strides = [1] * len(axes) if strides is None else list(strides)
    if not len(axes) == len(begin) == len(end) == len(strides):
        raise ValueError(f"strided_slice: axes, begin, end and strides differ in length: "
                         f"{len(axes)}, {len(begin)}, {len(end)}, {len(strides)}")
    ndim = len(a.shape)
    shape, starts, steps = list(a.shape), [None] * ndim, [1] * ndim
    for x, b, e, s in zip(axes, begin, end, strides):
        x = normalize_axis(x, ndim, "strided_slice")
        starts[x], shape[x] = slice_bounds(a.shape[x], b, e, int(s), assume_inbound)
        steps[x] = int(s)

    def fcompute(*i):
        return a[tuple(idx if starts[x] is None else starts[x] + idx * steps[x]
                       for x, idx in enumerate(i))]

    return compute(shape, named(fcompute, axis_names("ax", ndim)), name="T_strided_slice")

