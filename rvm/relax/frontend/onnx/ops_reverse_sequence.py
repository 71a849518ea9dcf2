"""ONNX ReverseSequence: along ``time_axis``, the first ``sequence_lens[b]`` elements of
each batch entry ``b`` (along ``batch_axis``) reversed, the rest copied. The source
position of every element, ``lens[b] - 1 - t`` below ``lens[b]`` and ``t`` past it, is
gathered along the time axis; lengths outside ``[0, time steps]`` are refused at run
time (the check names ``reverse_sequence_lens_in_range``)."""
import numpy as np

from rvm.relax.frontend.onnx.registry import converter
from rvm.relax.frontend.onnx.runtime_shape import shape_vars
from rvm.relax.op import binary, index, manipulate, search, statistical, unary


@converter("ReverseSequence")
def _reverse_sequence(ctx, inputs, attrs):
    x, lens = ctx.tensor(inputs[0]), ctx.tensor(inputs[1])
    dims = ctx.shape(x)
    time_axis, batch_axis = attrs.get("time_axis", 0), attrs.get("batch_axis", 1)
    if {time_axis, batch_axis} != {0, 1}:
        raise ValueError("ReverseSequence's time_axis and batch_axis must be 0 and 1 or 1 "
                         f"and 0, got {time_axis} and {batch_axis}")
    if len(dims) < 2 or not all(isinstance(d, int) for d in dims[:2]):
        raise ValueError("ReverseSequence expects an input of rank >= 2 with static batch "
                         f"and time axes, got shape {dims}")
    steps, batch = dims[time_axis], dims[batch_axis]
    if ctx.shape(lens) != [batch] or not ctx.dtype(lens).startswith("int"):
        raise ValueError(f"ReverseSequence's sequence_lens must be an integer tensor of shape "
                         f"[{batch}], got {ctx.dtype(lens)}{ctx.shape(lens)}")
    lens = ctx.emit(unary.astype(lens, "int64"))
    inside = ctx.emit(binary.logical_and(
        binary.greater_equal(lens, ctx.tensor(np.array(0, "int64"))),
        binary.less_equal(lens, ctx.tensor(np.array(steps, "int64")))))
    valid = ctx.emit(statistical.min(unary.astype(inside, "int64"), keepdims=True))
    shape_vars(ctx, ctx.emit(manipulate.reshape(valid, [1])), [1],
               "reverse_sequence_lens_in_range")
    grid = [1, 1]
    grid[time_axis] = steps
    t = ctx.tensor(np.arange(steps, dtype="int64").reshape(grid))
    grid = [1, 1]
    grid[batch_axis] = batch
    lens = ctx.emit(manipulate.reshape(lens, grid))
    mirrored = ctx.emit(binary.subtract(binary.subtract(lens, ctx.tensor(np.array(1, "int64"))),
                                        t))
    source = ctx.emit(search.where(binary.less(t, lens), mirrored, t))
    source = ctx.emit(manipulate.reshape(source, dims[:2] + [1] * (len(dims) - 2)))
    source = ctx.emit(manipulate.broadcast_to(source, dims))
    return ctx.emit(index.gather_elements(x, source, axis=time_axis))
