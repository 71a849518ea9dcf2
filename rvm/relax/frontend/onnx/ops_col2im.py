"""ONNX Col2Im: the sliding blocks of ``input`` (``[N, C * prod(block_shape), L]``) summed
back into an image of ``image_shape`` (``[N, C, *image_shape]``), as the adjoint of im2col.

Column ``(c * prod(block) + b, l)`` holds block offset ``b`` (row-major over
``block_shape``) of sliding-block position ``l`` (row-major over the block counts
``(image + pad_begin + pad_end - dilation * (block - 1) - 1) // stride + 1``); it lands
at image position ``l_d * stride_d + b_d * dilation_d - pad_begin_d`` of channel ``c``
when that lies inside the image. The flat image position of every column is computed as
an int64 tensor (positions outside go to one spare slot) and the input is added there by
``scatter_elements``. ``image_shape`` and ``block_shape`` may be fed at run time: the
image lengths and the channel count become symbolic dimensions bound by ``match_cast``,
and the block shape must divide the input's channels into blocks whose positions number
``L`` (checked at run time).
"""
import numpy as np

from rvm.relax.frontend.onnx.registry import attr_ints, converter
from rvm.relax.frontend.onnx.resize_runtime import _require as require
from rvm.relax.frontend.onnx.runtime_shape import int64_tensor, shape_vars, static_length
from rvm.relax.op import binary, create, index, manipulate, scatter, search, statistical


def _i64(ctx, value):
    return ctx.tensor(np.array(value, "int64"))


@converter("Col2Im")
def _col2im(ctx, inputs, attrs):
    x = ctx.tensor(inputs[0])
    dims = ctx.shape(x)
    if len(dims) != 3 or not all(isinstance(d, int) for d in dims):
        raise ValueError(f"Col2Im expects a static [N, C * prod(block_shape), L] input, got "
                         f"shape {dims}")
    batch, columns, length = dims
    image, block = (int64_tensor(ctx, v) for v in inputs[1:3])
    rank = static_length(ctx, image, "Col2Im's image_shape")
    if static_length(ctx, block, "Col2Im's block_shape") != rank or rank < 1:
        raise ValueError(f"Col2Im's image_shape and block_shape must hold one length per "
                         f"spatial axis, got shapes {ctx.shape(image)} and {ctx.shape(block)}")
    image, block = (ctx.emit(manipulate.reshape(v, [rank])) for v in (image, block))
    strides = attr_ints(attrs, "strides", [1] * rank)
    dilations = attr_ints(attrs, "dilations", [1] * rank)
    pads = attr_ints(attrs, "pads", [0] * (2 * rank))
    if len(strides) != rank or len(dilations) != rank or len(pads) != 2 * rank or \
            min(strides + dilations) < 1 or min(pads) < 0:
        raise ValueError(f"Col2Im's strides and dilations (>= 1) and pads (>= 0) must hold "
                         f"{rank}, {rank} and {2 * rank} values, got {strides}, {dilations} "
                         f"and {pads}")
    begin = _i64(ctx, pads[:rank])
    reach = binary.multiply(_i64(ctx, dilations), binary.subtract(block, _i64(ctx, 1)))
    counts = ctx.emit(binary.add(binary.floor_divide(binary.subtract(
        binary.add(image, _i64(ctx, [a + b for a, b in zip(pads[:rank], pads[rank:])])),
        binary.add(reach, _i64(ctx, 1))), _i64(ctx, strides)), _i64(ctx, 1)))
    per_block = ctx.emit(statistical.prod(block))
    require(ctx, binary.logical_and(
        binary.logical_and(binary.greater(statistical.min(block), _i64(ctx, 0)),
                           binary.greater_equal(statistical.min(image), _i64(ctx, 0))),
        binary.logical_and(binary.greater_equal(statistical.min(counts), _i64(ctx, 1)),
                           binary.equal(statistical.prod(counts), _i64(ctx, length)))),
        "col2im_blocks_match_the_input_length")
    require(ctx, binary.equal(binary.floor_mod(_i64(ctx, columns), per_block), _i64(ctx, 0)),
            "col2im_block_shape_divides_the_channels")
    channels = ctx.emit(manipulate.reshape(
        binary.floor_divide(_i64(ctx, columns), per_block), [1]))
    known = [isinstance(v, np.ndarray) for v in inputs[1:3]]
    channel_count = columns // int(np.prod(inputs[2])) if known[1] else None
    (channel_count,) = shape_vars(ctx, channels, [channel_count], "col2im_channels")
    lengths = shape_vars(ctx, image, [int(v) for v in inputs[1].reshape(-1)] if known[0] else
                         [None] * rank, "col2im")
    target = _targets(ctx, image, block, counts, per_block, columns, length, begin,
                      strides, dilations, rank)
    size = channel_count
    for d in lengths:
        size = size * d
    spare = ctx.emit(create.zeros([batch, size + 1], ctx.dtype(x)))
    where = ctx.emit(manipulate.broadcast_to(manipulate.reshape(target, [1, columns * length]),
                                             [batch, columns * length]))
    summed = ctx.emit(scatter.scatter_elements(
        spare, where, manipulate.reshape(x, [batch, columns * length]), axis=1,
        reduction="add"))
    summed = ctx.emit(index.strided_slice(summed, [1], [0], [size]))
    return ctx.emit(manipulate.reshape(summed, [batch, channel_count] + lengths))


def _digits(ctx, flat, radices, rank):
    """The row-major digits of the int64 tensor ``flat`` over the 1-D int64 tensor
    ``radices`` (``rank`` values): a list of tensors shaped like ``flat``."""
    out = []
    for d in reversed(range(rank)):
        radix = ctx.emit(manipulate.reshape(index.take(radices, _i64(ctx, [d]), axis=0), []))
        out.append(ctx.emit(binary.floor_mod(flat, radix)))
        flat = ctx.emit(binary.floor_divide(flat, radix))
    return out[::-1]


def _targets(ctx, image, block, counts, per_block, columns, length, begin, strides,
             dilations, rank):
    """The flat image position of every input column (``[columns * length]``, row-major
    over columns then positions), or the spare slot past the image for those outside."""
    column = ctx.emit(manipulate.reshape(create.arange(0, columns, 1, dtype="int64"),
                                         [columns, 1]))
    position = ctx.emit(manipulate.reshape(create.arange(0, length, 1, dtype="int64"),
                                           [1, length]))
    offsets = _digits(ctx, ctx.emit(binary.floor_mod(column, per_block)), block, rank)
    places = _digits(ctx, position, counts, rank)
    flat = ctx.emit(binary.floor_divide(column, per_block))  # the channel
    inside = None
    for d in range(rank):
        extent = ctx.emit(manipulate.reshape(index.take(image, _i64(ctx, [d]), axis=0), []))
        at = ctx.emit(binary.subtract(binary.add(
            binary.multiply(places[d], _i64(ctx, strides[d])),
            binary.multiply(offsets[d], _i64(ctx, dilations[d]))),
            manipulate.reshape(index.take(begin, _i64(ctx, [d]), axis=0), [])))
        ok = ctx.emit(binary.logical_and(binary.greater_equal(at, _i64(ctx, 0)),
                                         binary.less(at, extent)))
        inside = ok if inside is None else ctx.emit(binary.logical_and(inside, ok))
        flat = ctx.emit(binary.add(binary.multiply(flat, extent), at))
    spare = ctx.emit(binary.multiply(binary.floor_divide(_i64(ctx, columns), per_block),
                                     statistical.prod(image)))
    flat = ctx.emit(search.where(inside, flat, spare))
    return ctx.emit(manipulate.reshape(flat, [columns * length]))
