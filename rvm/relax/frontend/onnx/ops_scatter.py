"""ONNX scatters and GatherND: ScatterElements (and Scatter, its older name), ScatterND,
TensorScatter and GatherND, on ``relax.scatter_elements``, ``relax.scatter_nd`` and
``relax.gather_nd``.

TensorScatter writes ``update`` into ``past_cache`` along ``axis`` from each batch
entry's ``write_indices`` on (wrapping around the axis in ``circular`` mode): a
``scatter_elements`` whose indices are ``write_indices[b] + s``.
"""
import numpy as np

from rvm.relax.frontend.onnx.common import OnnxImportError
from rvm.relax.frontend.onnx.ops_math import scalar
from rvm.relax.frontend.onnx.ops_shape import normalize_axis
from rvm.relax.frontend.onnx.registry import converter
from rvm.relax.op import binary, manipulate, scatter, unary


def _reduction(attrs):
    reduction = attrs.get("reduction", "none")
    if reduction not in scatter.REDUCTIONS:
        raise OnnxImportError(f"reduction must be one of {list(scatter.REDUCTIONS)}, got "
                              f"{reduction!r}")
    return reduction


def _int64(ctx, x):
    return x if ctx.dtype(x) == "int64" else ctx.emit(unary.astype(x, "int64"))


@converter("ScatterElements", "Scatter")
def _scatter_elements(ctx, inputs, attrs):
    data, indices, updates = (ctx.tensor(v) for v in inputs)
    axis = normalize_axis(attrs.get("axis", 0), ctx.ndim(data))
    return ctx.emit(scatter.scatter_elements(data, _int64(ctx, indices), updates, axis,
                                             _reduction(attrs)))


@converter("ScatterND")
def _scatter_nd(ctx, inputs, attrs):
    data, indices, updates = (ctx.tensor(v) for v in inputs)
    return ctx.emit(scatter.scatter_nd(data, _int64(ctx, indices), updates, _reduction(attrs)))


@converter("GatherND")
def _gather_nd(ctx, inputs, attrs):
    data, indices = (ctx.tensor(v) for v in inputs)
    return ctx.emit(scatter.gather_nd(data, _int64(ctx, indices),
                                      int(attrs.get("batch_dims", 0))))


@converter("TensorScatter")
def _tensor_scatter(ctx, inputs, attrs):
    cache, update = ctx.tensor(inputs[0]), ctx.tensor(inputs[1])
    rank = ctx.ndim(cache)
    axis = normalize_axis(attrs.get("axis", -2), rank)
    if axis == 0:
        raise OnnxImportError("TensorScatter's axis must not be the batch axis 0")
    mode = attrs.get("mode", "linear")
    if mode not in ("linear", "circular"):
        raise OnnxImportError(f"TensorScatter's mode must be linear or circular, got {mode!r}")
    shape = ctx.shape(update)
    steps = [1] * rank
    steps[axis] = shape[axis]
    offsets = ctx.tensor(np.arange(shape[axis], dtype="int64").reshape(steps))
    batch = [1] * rank
    batch[0] = shape[0]
    if len(inputs) > 2 and inputs[2] is not None:
        start = ctx.emit(manipulate.reshape(_int64(ctx, ctx.tensor(inputs[2])), batch))
        offsets = ctx.emit(binary.add(start, offsets))
    if mode == "circular":
        length = scalar(ctx, ctx.shape(cache)[axis], "int64")
        offsets = ctx.emit(binary.floor_mod(offsets, length))
    indices = ctx.emit(manipulate.broadcast_to(offsets, shape))
    return ctx.emit(scatter.scatter_elements(cache, indices, update, axis))
