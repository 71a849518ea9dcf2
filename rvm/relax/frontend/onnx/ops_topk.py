"""ONNX TopK: the ``k`` largest (or smallest) elements along an axis and their indices.

Each element's rank along the axis is the number of elements that come before it: those
greater (smaller, for ``largest=0``), or equal with a lower index, so equal values keep
their order as onnx requires. Output position ``p`` then takes the element of rank
``p``: its index is the sum of the indices whose rank is ``p`` (exactly one), its value
gathered at that index. Both steps compare along the axis pairwise (``n * n`` and
``k * n`` elements per row), which suits the axis lengths TopK sees in models (classes,
candidates). ``k`` may be fed at run time: it becomes a symbolic dimension bound by
``match_cast``, checked at run time to lie in ``[0, n]``. The output is always sorted
(``sorted=0`` leaves the order to the implementation).
"""
import numpy as np

from rvm.relax.frontend.onnx.ops_shape import normalize_axis
from rvm.relax.frontend.onnx.registry import converter
from rvm.relax.frontend.onnx.resize_runtime import _require as require
from rvm.relax.frontend.onnx.runtime_shape import int64_tensor, scalar_tensor, shape_vars, \
    static_length
from rvm.relax.op import binary, create, index, manipulate, search, statistical, unary


@converter("TopK")
def _top_k(ctx, inputs, attrs):
    x, k = ctx.tensor(inputs[0]), inputs[1]
    dims = ctx.shape(x)
    if not dims:
        raise ValueError("TopK expects a tensor of rank >= 1, got a scalar")
    axis = normalize_axis(attrs.get("axis", -1), len(dims))
    length = dims[axis]
    if isinstance(k, np.ndarray):
        if k.size != 1 or not 0 <= int(k.reshape(-1)[0]) <= _at_most(length):
            raise ValueError(f"TopK's k must be one value in [0, {length}] (the length of "
                             f"axis {axis}), got {k.reshape(-1).tolist()}")
        count = int(k.reshape(-1)[0])
    else:
        k = int64_tensor(ctx, k)
        if static_length(ctx, k, "TopK's k") != 1:
            raise ValueError(f"TopK's k must hold one value, got shape {ctx.shape(k)}")
        k = ctx.emit(manipulate.reshape(k, [1]))
        require(ctx, binary.logical_and(
            binary.greater_equal(k, ctx.tensor(np.array(0, "int64"))),
            binary.less_equal(k, scalar_tensor(ctx, length))), "top_k_k_within_axis")
        (count,) = shape_vars(ctx, k, [None], "top_k")
    last = len(dims) - 1
    order = list(range(len(dims)))
    order[axis], order[last] = last, axis
    if axis != last:
        x = ctx.emit(manipulate.permute_dims(x, order))
    largest = bool(attrs.get("largest", 1))
    picked = _positions(ctx, x, length, count, largest)
    values = ctx.emit(index.gather_elements(x, picked, axis=last))
    if axis != last:
        values = ctx.emit(manipulate.permute_dims(values, order))
        picked = ctx.emit(manipulate.permute_dims(picked, order))
    return [values, picked]


def _at_most(length):
    return length if isinstance(length, int) else 1 << 62


def _positions(ctx, x, length, count, largest):
    """The indices, along the last axis of ``x``, of its ``count`` first elements in
    order (largest first when ``largest``)."""
    mine = ctx.emit(manipulate.expand_dims(x, [-1]))     # [..., n, 1]: element i
    other = ctx.emit(manipulate.expand_dims(x, [-2]))    # [..., 1, n]: element j
    where = create.arange(0, length, 1, dtype="int64")
    ahead = binary.greater(other, mine) if largest else binary.less(other, mine)
    tie = binary.logical_and(binary.equal(other, mine),
                             binary.less(manipulate.reshape(where, [1, length]),
                                         manipulate.reshape(where, [length, 1])))
    before = ctx.emit(binary.logical_or(ahead, tie))
    rank = ctx.emit(statistical.sum(unary.astype(before, "int64"), axis=[-1]))  # [..., n]
    slots = ctx.emit(manipulate.reshape(create.arange(0, count, 1, dtype="int64"),
                                        [count, 1]))
    match = ctx.emit(binary.equal(manipulate.expand_dims(rank, [-2]), slots))  # [..., k, n]
    chosen = search.where(match, where, ctx.tensor(np.array(0, "int64")))
    return ctx.emit(statistical.sum(chosen, axis=[-1]))  # [..., k]
