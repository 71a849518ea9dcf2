"""Shapes decided by values known only at run time (TVM's approach).

When an operand that decides an output's shape (Reshape's shape, Expand's shape,
ConstantOfShape's input, Tile's repeats, Range's bounds, Split's sizes, Pad's pads and
axes, Slice's axes and steps, Squeeze/Unsqueeze's and the reductions' axes) is a graph
input or computed at run time, the importer computes the output's dimensions as a small
int64 tensor, turns it into a shape (``vm.builtin.tensor_to_shape``) and binds fresh
symbolic dimensions to it with ``match_cast``; the operator then works on those
dimensions.
Where a wrong value would make a kernel read or write out of bounds, a ``match_cast``
checks it at run time first (the element count of a reshape, the non-broadcast
dimensions of an expand, Range's non-zero delta, Split's sizes, Slice's non-zero steps
and each axis named once), so a bad value is an error naming the check.

A reduction over run-time axes reduces each axis in place when it is selected (the
shape is kept, so the selection may be a run-time value), then cuts the selected axes
to one element (``reduce_in_place``, ``keep_reduced``).
"""
import numpy as np

from rvm.ir.expr import PrimExpr
from rvm.relax.op import base, binary, create, index, join, manipulate, search, statistical, unary
from rvm.relax.struct_info import ShapeStructInfo, TensorStructInfo
from rvm.tir.expr import Var as TirVar


def is_run_time(value):
    """Whether an operand is known only at run time (not a numpy array computed at import)."""
    return value is not None and not isinstance(value, np.ndarray)


def int64_tensor(ctx, value):
    """A run-time integer operand as an int64 Relax tensor."""
    tensor = ctx.tensor(value)
    if not ctx.dtype(tensor).startswith(("int", "uint")):
        raise ValueError(f"expected an integer tensor, got {ctx.dtype(tensor)}")
    if ctx.dtype(tensor) != "int64":
        tensor = ctx.emit(unary.astype(tensor, "int64"))
    return tensor


def static_length(ctx, value, what):
    """The static length of a 1-D operand (a scalar counts as one)."""
    dims = ctx.shape(value)
    if len(dims) > 1 or not all(isinstance(d, int) for d in dims):
        raise ValueError(f"{what} must be a 1-D tensor of static length, got shape {dims}")
    return dims[0] if dims else 1


def dims_tensor(ctx, dims):
    """A list of dimensions (ints, ``tir`` expressions) as a 1-D int64 Relax tensor."""
    if all(isinstance(d, int) for d in dims):
        return ctx.tensor(np.array(dims, "int64").reshape(len(dims)))
    return ctx.tensor(np.array(list(dims), dtype=object).reshape(len(dims)))


def scalar_tensor(ctx, value):
    """An int or ``tir`` expression as a 0-d int64 Relax tensor."""
    if isinstance(value, PrimExpr):
        return ctx.tensor(np.array(value, dtype=object))
    return ctx.tensor(np.array(int(value), "int64"))


def shape_vars(ctx, tensor, pattern, hint):
    """Binds the values of the 1-D int64 tensor ``tensor`` to dimensions at run time:
    ``pattern`` lists, per value, a dimension it must equal (checked at run time) or None
    for a fresh symbolic dimension. Returns the dimensions."""
    shape = ctx.emit(base.call_pure_packed("vm.builtin.tensor_to_shape", tensor,
                                           sinfo_args=ShapeStructInfo(ndim=len(pattern))))
    count = ctx.root.__dict__.setdefault("_run_time_dims", [0])
    dims = []
    for want in pattern:
        if want is None:
            count[0] += 1
            want = TirVar(f"{hint}{count[0]}", "int64")
        dims.append(want)
    ctx.bb.match_cast(shape, ShapeStructInfo(dims), name_hint=f"{hint}_shape")
    return dims


def _product(dims):
    total = 1
    for d in dims:
        total = total * d
    return total


def reshape_checked(ctx, data, target, hint):
    """``data`` reshaped to the run-time shape in the 1-D int64 tensor ``target`` (no -1,
    no 0 meaning "copy"); the element counts are checked to agree before the reshape."""
    data = ctx.tensor(data)
    dims = ctx.shape(data)
    new = shape_vars(ctx, target, [None] * ctx.shape(target)[0], hint)
    empty = isinstance(_product(dims), int) and _product(dims) == 0
    flat = create.zeros([0], ctx.dtype(data)) if empty else \
        manipulate.reshape(data, [_product(dims)])
    flat = ctx.bb.match_cast(ctx.emit(flat), TensorStructInfo([_product(new)], ctx.dtype(data)),
                             name_hint=f"{hint}_element_count")
    if empty:  # no elements to move
        return ctx.emit(create.zeros(new, ctx.dtype(data)))
    return ctx.emit(manipulate.reshape(flat, new))


def resolve_reshape(ctx, data_dims, target, allowzero):
    """ONNX Reshape's run-time target (1-D int64 tensor) with its zeros (unless
    ``allowzero``) copied from ``data_dims`` and its -1 inferred from the element count."""
    length = ctx.shape(target)[0]
    zero = ctx.tensor(np.array(0, "int64"))
    if not allowzero:
        copied = list(data_dims[:length]) + [0] * (length - len(data_dims))
        target = ctx.emit(search.where(binary.equal(target, zero), dims_tensor(ctx, copied),
                                       target))
    minus = ctx.emit(binary.equal(target, ctx.tensor(np.array(-1, "int64"))))
    one = ctx.tensor(np.array(1, "int64"))
    known = ctx.emit(statistical.prod(search.where(minus, one, target)))
    known = ctx.emit(binary.maximum(known, one))  # no division by zero
    rest = ctx.emit(binary.floor_divide(scalar_tensor(ctx, _product(data_dims)), known))
    return ctx.emit(search.where(minus, rest, target))


def broadcast_target(ctx, data_dims, target, hint):
    """ONNX Expand's run-time output dimensions: ``data_dims`` and the 1-D int64 tensor
    ``target`` broadcast both ways. A data dimension other than 1 must be matched by the
    target (or the target's 1): checked at run time."""
    length = ctx.shape(target)[0]
    rank = max(len(data_dims), length)
    padded = [1] * (rank - len(data_dims)) + list(data_dims)
    if length < rank:
        target = ctx.emit(join.concat([ctx.tensor(np.ones(rank - length, "int64")), target],
                                      axis=0))
    one = ctx.tensor(np.array(1, "int64"))
    out = ctx.emit(search.where(binary.equal(target, one), dims_tensor(ctx, padded), target))
    pattern = [None if isinstance(d, int) and d == 1 else d for d in padded]
    return shape_vars(ctx, out, pattern, hint)



def tile(ctx, data, repeats):
    """``data`` tiled by the run-time ``repeats`` (1-D int64 tensor, one per axis): each
    axis ``d`` becomes ``(r, d)`` by broadcasting, then ``r * d`` by a reshape."""
    data = ctx.tensor(data)
    dims = ctx.shape(data)
    reps = shape_vars(ctx, repeats, [None] * len(dims), "repeat")
    spread = ctx.emit(manipulate.reshape(data, [v for d in dims for v in (1, d)]))
    spread = ctx.emit(manipulate.broadcast_to(spread, [v for r, d in zip(reps, dims)
                                                       for v in (r, d)]))
    return ctx.emit(manipulate.reshape(spread, [r * d for r, d in zip(reps, dims)]))


def arange(ctx, start, limit, delta, dtype):
    """ONNX Range over run-time scalar bounds: ``start + k * delta`` for ``k`` below
    ``max(ceil((limit - start) / delta), 0)``; a zero ``delta`` is refused at run time."""
    start, limit, delta = (ctx.emit(manipulate.reshape(ctx.tensor(v), [1]))
                           for v in (start, limit, delta))
    zero = ctx.tensor(np.array(0, dtype))
    nonzero = ctx.emit(unary.astype(binary.not_equal(delta, zero), "int64"))
    shape_vars(ctx, nonzero, [1], "range_delta_nonzero")  # "expected 1, got 0": delta is 0
    wide = [ctx.emit(unary.astype(v, "float64")) for v in (start, limit, delta)]
    steps = ctx.emit(unary.ceil(binary.divide(binary.subtract(wide[1], wide[0]), wide[2])))
    steps = ctx.emit(binary.maximum(unary.astype(steps, "int64"),
                                    ctx.tensor(np.array(0, "int64"))))
    (count,) = shape_vars(ctx, steps, [None], "range")
    index = ctx.emit(unary.astype(create.arange(0, count, 1, dtype="int64"), dtype))
    return ctx.emit(binary.add(start, binary.multiply(index, delta)))


def _axes_positions(ctx, axes, rank):
    """``([rank, 1] positions, [1, m] axes made non-negative)`` as int64 tensors."""
    size = ctx.tensor(np.array(rank, "int64"))
    axes = ctx.emit(manipulate.reshape(axes, [1, ctx.shape(axes)[0]]))
    axes = ctx.emit(search.where(binary.less(axes, ctx.tensor(np.array(0, "int64"))),
                                 binary.add(axes, size), axes))
    return ctx.tensor(np.arange(rank, dtype="int64").reshape(rank, 1)), axes


def _count(ctx, mask):
    return ctx.emit(statistical.sum(unary.astype(mask, "int64"), axis=1))


def unsqueeze(ctx, data, axes):
    """``data`` with size-1 axes inserted at the run-time ``axes`` (1-D int64 tensor)."""
    data = ctx.tensor(data)
    dims = ctx.shape(data)
    rank = len(dims) + ctx.shape(axes)[0]
    if not dims:
        return ctx.emit(manipulate.reshape(data, [1] * rank))
    positions, axes = _axes_positions(ctx, axes, rank)
    inserted = ctx.emit(binary.greater(_count(ctx, binary.equal(positions, axes)),
                                       ctx.tensor(np.array(0, "int64"))))
    before = _count(ctx, binary.less(axes, positions))
    source = ctx.emit(binary.subtract(ctx.tensor(np.arange(rank, dtype="int64")), before))
    kept = ctx.emit(index.take(dims_tensor(ctx, dims), source, axis=0, mode="clip"))
    target = ctx.emit(search.where(inserted, ctx.tensor(np.array(1, "int64")), kept))
    return reshape_checked(ctx, data, target, "unsqueeze")


def squeeze(ctx, data, axes):
    """``data`` without the axes named by the run-time ``axes`` (1-D int64 tensor); the
    element count check refuses squeezing an axis that is not 1."""
    data = ctx.tensor(data)
    return reshape_checked(ctx, data, squeeze_target(ctx, ctx.shape(data), axes), "squeeze")


def squeeze_target(ctx, dims, axes):
    """The dimensions ``dims`` without those the run-time ``axes`` name, as a 1-D int64
    tensor (of ``len(dims) - len(axes)`` elements)."""
    rank = len(dims) - ctx.shape(axes)[0]
    if rank < 0:
        raise ValueError(f"Squeeze: {ctx.shape(axes)[0]} axes for a rank-{len(dims)} tensor")
    positions, axes = _axes_positions(ctx, axes, len(dims))
    keep = ctx.emit(binary.equal(_count(ctx, binary.equal(positions, axes)),
                                 ctx.tensor(np.array(0, "int64"))))
    slot = ctx.emit(binary.subtract(statistical.cumsum(unary.astype(keep, "int64"), axis=0),
                                    ctx.tensor(np.array(1, "int64"))))
    # out[j] = the dimension at the j-th kept position
    wanted = ctx.tensor(np.arange(rank, dtype="int64").reshape(rank, 1))
    chosen = ctx.emit(binary.logical_and(binary.equal(manipulate.reshape(slot, [1, len(dims)]),
                                                      wanted),
                                         manipulate.reshape(keep, [1, len(dims)])))
    picked = search.where(chosen, manipulate.reshape(dims_tensor(ctx, dims), [1, len(dims)]),
                          ctx.tensor(np.array(0, "int64")))
    return ctx.emit(statistical.sum(picked, axis=1))


def selected_axes(ctx, axes, rank):
    """A bool tensor of ``rank`` elements: which axes the run-time ``axes`` (1-D int64
    tensor, negative ones counted from the end) name."""
    positions, axes = _axes_positions(ctx, axes, rank)
    return ctx.emit(binary.greater(_count(ctx, binary.equal(positions, axes)),
                                   ctx.tensor(np.array(0, "int64"))))


def reduce_in_place(ctx, x, selected, reducer):
    """``x`` with each axis the run-time bool tensor ``selected`` names reduced by
    ``reducer(x, axis)`` (keeping dims) and broadcast back: the shape of ``x`` is kept, so
    which axes are reduced may be decided at run time."""
    rank = len(ctx.shape(x))
    for k in range(rank):
        chosen = ctx.emit(manipulate.reshape(
            index.take(selected, ctx.tensor(np.array([k], "int64")), axis=0), [1] * rank))
        x = ctx.emit(search.where(chosen, reducer(x, k), x))
    return x


def keep_reduced(ctx, x, selected, axes, keepdims):
    """The first element along each selected axis of a ``reduce_in_place`` result: the
    reduction with its axes kept as 1, or removed (``keepdims`` false, ``axes`` the
    run-time axes tensor)."""
    dims = ctx.shape(x)
    ends = ctx.emit(search.where(selected, ctx.tensor(np.ones(len(dims), "int64")),
                                 dims_tensor(ctx, dims)))
    ends = shape_vars(ctx, ends, [None] * len(dims), "reduced")
    out = ctx.emit(index.strided_slice(x, list(range(len(dims))), [0] * len(dims), ends))
    return out if keepdims else squeeze(ctx, out, axes)


def reduced_fill(ctx, dims, selected, axes, keepdims, value, dtype):
    """The reduction of a tensor of dimensions ``dims`` that has no elements, over the
    run-time axes: ``value`` (the reduction's identity) in the reduced shape."""
    if keepdims:
        target = ctx.emit(search.where(selected, ctx.tensor(np.ones(len(dims), "int64")),
                                       dims_tensor(ctx, dims)))
    else:
        target = squeeze_target(ctx, dims, axes)
    shape = shape_vars(ctx, target, [None] * ctx.shape(target)[0], "reduced")
    return ctx.emit(create.full(shape, ctx.tensor(np.array(value, dtype)), dtype))


def split(ctx, data, sizes, axis):
    """``data`` split along ``axis`` into parts of the run-time ``sizes`` (1-D int64
    tensor, one per output); the sizes must be non-negative and add up to the axis
    length (checked at run time)."""
    data = ctx.tensor(data)
    length = ctx.shape(data)[axis]
    count = ctx.shape(sizes)[0]
    total = ctx.emit(manipulate.reshape(statistical.sum(sizes), [1]))
    shape_vars(ctx, total, [length], "split_total")
    smallest = ctx.emit(manipulate.reshape(statistical.min(sizes), [1]))
    non_negative = ctx.emit(unary.astype(binary.greater_equal(
        smallest, ctx.tensor(np.array(0, "int64"))), "int64"))
    shape_vars(ctx, non_negative, [1], "split_sizes_non_negative")
    parts = shape_vars(ctx, sizes, [None] * count, "split")
    out, begin = [], 0
    for part in parts:
        out.append(ctx.emit(index.strided_slice(data, [axis], [begin], [begin + part])))
        begin = begin + part
    return out


def pad(ctx, x, pads, axes, mode, value):
    """ONNX Pad with run-time ``pads`` (1-D int64 tensor: the befores, then the afters, of
    ``axes``): along each axis, the output's positions ``arange(before + length + after)
    - before`` index ``x`` as ``mode`` says (constant: ``value`` outside ``x``; edge,
    wrap, reflect: a clamped, wrapped or mirrored index). Negative pads crop."""
    x = ctx.tensor(x)
    amounts = shape_vars(ctx, pads, [None] * (2 * len(axes)), "pad")
    zero = ctx.tensor(np.array(0, "int64"))
    for k, axis in enumerate(axes):
        dims = ctx.shape(x)
        length = dims[axis]
        if not isinstance(length, int) or length == 0:
            raise ValueError(f"padding by run-time amounts needs a static, non-empty axis, "
                             f"got dimension {length}")
        before, after = amounts[k], amounts[k + len(axes)]
        positions = ctx.emit(binary.subtract(
            create.arange(0, before + length + after, 1, dtype="int64"),
            scalar_tensor(ctx, before)))
        size = ctx.tensor(np.array(length, "int64"))
        if mode == "wrap":
            positions = ctx.emit(binary.floor_mod(positions, size))
        elif mode == "reflect":
            period = ctx.tensor(np.array(2 * (length - 1) if length > 1 else 1, "int64"))
            positions = ctx.emit(binary.floor_mod(unary.abs(positions), period))
            positions = ctx.emit(search.where(binary.greater_equal(positions, size),
                                              binary.subtract(period, positions), positions))
        taken = ctx.emit(index.take(x, positions, axis=axis, mode="clip"))
        if mode == "constant":
            inside = ctx.emit(binary.logical_and(binary.greater_equal(positions, zero),
                                                 binary.less(positions, size)))
            others = [a for a in range(len(dims)) if a != axis]
            if others:
                inside = ctx.emit(manipulate.expand_dims(inside, others))
            taken = ctx.emit(search.where(inside, taken, value))
        x = taken
    return x


def per_axis(ctx, axes, values, defaults, hint):
    """The run-time ``values`` (1-D int64 tensor, one per entry of the run-time ``axes``)
    spread over all axes: a 1-D int64 tensor of ``len(defaults)`` elements holding, per
    axis, its value or its entry of ``defaults`` when ``axes`` does not name it. Each axis
    may be named once and every entry of ``axes`` must be in range (checked at run time,
    the check named ``<hint>_axes_unique_and_in_range``)."""
    rank, count = len(defaults), ctx.shape(axes)[0]
    positions, axes = _axes_positions(ctx, axes, rank)
    named = ctx.emit(binary.equal(positions, axes))
    times = _count(ctx, named)
    once = ctx.emit(binary.logical_and(binary.less_equal(statistical.max(times),
                                                         ctx.tensor(np.array(1, "int64"))),
                                       binary.equal(statistical.sum(times),
                                                    ctx.tensor(np.array(count, "int64")))))
    shape_vars(ctx, ctx.emit(unary.astype(manipulate.reshape(once, [1]), "int64")), [1],
               f"{hint}_axes_unique_and_in_range")
    spread = statistical.sum(search.where(named, manipulate.reshape(values, [1, count]),
                                          ctx.tensor(np.array(0, "int64"))), axis=1)
    return ctx.emit(search.where(binary.greater(times, ctx.tensor(np.array(0, "int64"))),
                                 spread, dims_tensor(ctx, defaults)))


def strided_slice(ctx, data, starts, ends, axes, steps):
    """ONNX Slice whose ``axes`` or ``steps`` (and possibly ``starts``, ``ends``) are known
    only at run time (1-D int64 tensors of equal static length): per axis, the bounds are
    counted from the end when negative and clamped as onnx does, the run-time output length
    bound to a symbolic dimension, and the axis gathered at ``start + k * step``. A zero
    step is refused at run time."""
    data = ctx.tensor(data)
    dims = ctx.shape(data)
    if not all(isinstance(d, int) for d in dims):
        raise ValueError(f"Slice's axes or steps are computed at run time; the input must "
                         f"then have static dimensions, got {dims}")
    rank = len(dims)
    zero, one = (ctx.tensor(np.array(v, "int64")) for v in (0, 1))
    nonzero = ctx.emit(statistical.min(unary.astype(binary.not_equal(steps, zero), "int64")))
    shape_vars(ctx, ctx.emit(manipulate.reshape(nonzero, [1])), [1], "slice_steps_nonzero")
    size = dims_tensor(ctx, dims)
    step = per_axis(ctx, axes, steps, [1] * rank, "slice")
    bounds = []
    for values, default in ((starts, [0] * rank), (ends, dims)):
        values = per_axis(ctx, axes, values, default, "slice")
        bounds.append(ctx.emit(search.where(binary.less(values, zero),
                                            binary.add(values, size), values)))
    forward = ctx.emit(binary.greater(step, zero))
    last = ctx.emit(binary.subtract(size, one))
    minus = ctx.tensor(np.array(-1, "int64"))
    begin = ctx.emit(binary.maximum(binary.minimum(bounds[0], search.where(forward, size, last)),
                                    zero))
    end = ctx.emit(binary.maximum(binary.minimum(bounds[1], search.where(forward, size, last)),
                                  search.where(forward, zero, minus)))
    span = ctx.emit(search.where(forward, binary.subtract(end, begin),
                                 binary.subtract(begin, end)))
    stride = ctx.emit(unary.abs(step))
    length = ctx.emit(search.where(binary.greater(span, zero), binary.add(
        binary.floor_divide(binary.subtract(span, one), stride), one), zero))
    lengths = shape_vars(ctx, length, [None] * rank, "slice")
    for axis, extent in enumerate(lengths):
        pick = ctx.tensor(np.array([axis], "int64"))
        first = ctx.emit(index.take(begin, pick, axis=0))
        stride_ = ctx.emit(index.take(step, pick, axis=0))
        positions = ctx.emit(binary.add(first, binary.multiply(
            create.arange(0, extent, 1, dtype="int64"), stride_)))
        data = ctx.emit(index.take(data, positions, axis=axis, mode="clip"))
    return data
