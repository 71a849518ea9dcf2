"""ONNX CenterCropPad: each axis of ``axes`` cut or zero-padded to its target length
(the ``shape`` input), the kept part centred.

Along such an axis of length ``n`` cut or padded to ``m``, output position ``j`` reads
input position ``j + s`` with ``s = (n - m) // 2`` when cutting and ``-((m - n) // 2)``
when padding (onnx's reference drops or adds the odd element at the end), and is zero
where that lies outside the input: the axis is gathered at the clamped positions, then
masked. The targets may be fed at run time: each becomes a symbolic dimension bound by
``match_cast`` (``runtime_shape.shape_vars``); a negative one is refused at run time.
"""
import numpy as np

from rvm.relax.frontend.onnx.ops_shape import normalize_axis
from rvm.relax.frontend.onnx.registry import converter
from rvm.relax.frontend.onnx.resize_runtime import _require
from rvm.relax.frontend.onnx.runtime_shape import int64_tensor, scalar_tensor, shape_vars, \
    static_length
from rvm.relax.op import binary, create, index, manipulate, search, unary


@converter("CenterCropPad")
def _center_crop_pad(ctx, inputs, attrs):
    x, target = ctx.tensor(inputs[0]), inputs[1]
    dims = ctx.shape(x)
    rank = len(dims)
    given = attrs.get("axes")
    axes = list(range(rank)) if given is None else [normalize_axis(a, rank) for a in given]
    if len(set(axes)) != len(axes):
        raise ValueError(f"CenterCropPad's axes must name distinct axes, got {list(given)}")
    for axis in axes:
        if not isinstance(dims[axis], int):
            raise ValueError(f"CenterCropPad needs a static length along its axes {axes}, "
                             f"got the input shape {dims}")
    if isinstance(target, np.ndarray):
        sizes = [int(v) for v in target.reshape(-1)]
        if len(sizes) != len(axes) or min(sizes, default=0) < 0:
            raise ValueError(f"CenterCropPad's shape must hold one length >= 0 per axis "
                             f"({len(axes)} axes), got {sizes}")
    else:
        target = int64_tensor(ctx, target)
        if static_length(ctx, target, "CenterCropPad's shape") != len(axes):
            raise ValueError(f"CenterCropPad's shape must hold one length per axis "
                             f"({len(axes)} axes), got shape {ctx.shape(target)}")
        target = ctx.emit(manipulate.reshape(target, [len(axes)]))
        _require(ctx, binary.greater_equal(target, ctx.tensor(np.array(0, "int64"))),
                 "center_crop_pad_shape_non_negative")
        sizes = shape_vars(ctx, target, [None] * len(axes), "center_crop_pad")
    for axis, size in zip(axes, sizes):
        x = _crop_or_pad(ctx, x, axis, size)
    return x


def _crop_or_pad(ctx, x, axis, size):
    """``x`` with ``axis`` cut or zero-padded to ``size`` (an int or a symbolic
    dimension), centred."""
    dims = ctx.shape(x)
    length = dims[axis]
    if isinstance(size, int) and size == length:
        return x
    if length == 0 or isinstance(size, int) and size == 0:  # nothing to read
        return ctx.emit(create.zeros(dims[:axis] + [size] + dims[axis + 1:], ctx.dtype(x)))
    diff = ctx.emit(binary.subtract(ctx.tensor(np.array(length, "int64")),
                                    scalar_tensor(ctx, size)))
    half = ctx.emit(binary.floor_divide(unary.abs(diff), ctx.tensor(np.array(2, "int64"))))
    shift = ctx.emit(search.where(binary.less(diff, ctx.tensor(np.array(0, "int64"))),
                                  unary.negative(half), half))
    positions = ctx.emit(binary.add(create.arange(0, size, 1, dtype="int64"), shift))
    taken = ctx.emit(index.take(x, positions, axis=axis, mode="clip"))
    inside = ctx.emit(binary.logical_and(
        binary.greater_equal(positions, ctx.tensor(np.array(0, "int64"))),
        binary.less(positions, ctx.tensor(np.array(length, "int64")))))
    others = [a for a in range(len(dims)) if a != axis]
    if others:
        inside = ctx.emit(manipulate.expand_dims(inside, others))
    return ctx.emit(search.where(inside, taken, ctx.tensor(np.zeros((), ctx.dtype(x)))))
