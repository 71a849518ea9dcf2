"""ONNX MaxUnpool: the values of a max pooling written back where they came from.

``X`` and ``I`` (MaxPool's values and flat indices) give ``out.flat[I] = X`` over the
unpooled shape ``(in - 1) * stride - pad_begin - pad_end + kernel`` per spatial axis
(``scatter_elements``; an index outside it is refused at run time), the rest zero. An
``output_shape`` extends that with zeros at the end of each spatial axis, as onnx's
reference does; it may be fed at run time, its spatial lengths then symbolic dimensions
bound by ``match_cast`` and checked at run time to be no smaller than the unpooled ones
(the batch and channels must match ``X``).
"""
import numpy as np

from rvm.relax.frontend.onnx.registry import attr_ints, converter
from rvm.relax.frontend.onnx.resize_runtime import _require as require
from rvm.relax.frontend.onnx.runtime_shape import int64_tensor, shape_vars, static_length
from rvm.relax.op import binary, create, index, manipulate, scatter, search


@converter("MaxUnpool")
def _max_unpool(ctx, inputs, attrs):
    x, where = ctx.tensor(inputs[0]), ctx.tensor(inputs[1])
    dims = ctx.shape(x)
    rank = len(dims) - 2
    if rank < 1 or not all(isinstance(d, int) for d in dims) or ctx.shape(where) != dims:
        raise ValueError(f"MaxUnpool expects static X and I of one shape [N, C, spatial...], "
                         f"got {dims} and {ctx.shape(where)}")
    kernel = attr_ints(attrs, "kernel_shape")
    strides = attr_ints(attrs, "strides", [1] * rank)
    pads = attr_ints(attrs, "pads", [0] * (2 * rank))
    if kernel is None or len(kernel) != rank or len(strides) != rank or len(pads) != 2 * rank:
        raise ValueError(f"MaxUnpool needs kernel_shape, strides and pads of {rank}, {rank} "
                         f"and {2 * rank} values, got {kernel}, {strides} and {pads}")
    unpooled = dims[:2] + [(n - 1) * s - pads[k] - pads[k + rank] + kern for k, (n, s, kern)
                           in enumerate(zip(dims[2:], strides, kernel))]
    if min(unpooled) < 1:
        raise ValueError(f"MaxUnpool's unpooled shape {unpooled} has an empty axis")
    total = int(np.prod(unpooled))
    count = int(np.prod(dims))
    where = ctx.emit(manipulate.reshape(int64_tensor(ctx, where), [count]))
    # scatter_elements clamps an index into the tensor: refuse one outside instead
    require(ctx, binary.logical_and(
        binary.greater_equal(where, ctx.tensor(np.array(0, "int64"))),
        binary.less(where, ctx.tensor(np.array(total, "int64")))),
        "max_unpool_indices_within_the_unpooled_shape")
    flat = ctx.emit(scatter.scatter_elements(create.zeros([total], ctx.dtype(x)), where,
                                             manipulate.reshape(x, [count]), axis=0))
    out = ctx.emit(manipulate.reshape(flat, unpooled))
    wanted = inputs[2] if len(inputs) > 2 else None
    if wanted is None:
        return out
    if isinstance(wanted, np.ndarray):
        lengths = [int(v) for v in wanted.reshape(-1)]
        if len(lengths) != rank + 2 or lengths[:2] != dims[:2] or \
                any(a < b for a, b in zip(lengths[2:], unpooled[2:])):
            raise ValueError(f"MaxUnpool's output_shape must be [{dims[0]}, {dims[1]}, "
                             f"lengths >= {unpooled[2:]}], got {lengths}")
    else:
        wanted = int64_tensor(ctx, wanted)
        if static_length(ctx, wanted, "MaxUnpool's output_shape") != rank + 2:
            raise ValueError(f"MaxUnpool's output_shape must hold {rank + 2} values, got "
                             f"shape {ctx.shape(wanted)}")
        wanted = ctx.emit(manipulate.reshape(wanted, [rank + 2]))
        require(ctx, binary.greater_equal(wanted, ctx.tensor(np.array(unpooled, "int64"))),
                "max_unpool_output_shape_covers_the_unpooled_shape")
        lengths = shape_vars(ctx, wanted, dims[:2] + [None] * rank, "max_unpool")
    for axis in range(2, rank + 2):
        out = _extend(ctx, out, axis, lengths[axis], unpooled[axis])
    return out


def _extend(ctx, x, axis, length, have):
    """``x`` (``have`` long along ``axis``) extended with zeros to ``length``."""
    if isinstance(length, int) and length == have:
        return x
    positions = create.arange(0, length, 1, dtype="int64")
    taken = ctx.emit(index.take(x, positions, axis=axis, mode="clip"))
    inside = binary.less(positions, ctx.tensor(np.array(have, "int64")))
    others = [a for a in range(len(ctx.shape(x))) if a != axis]
    inside = ctx.emit(manipulate.expand_dims(inside, others))
    return ctx.emit(search.where(inside, taken, ctx.tensor(np.zeros((), ctx.dtype(x)))))
