"""ONNX GridSample (2-D and volumetric), composed of elementwise arithmetic and ``take``.

Each output position reads the input at the grid's normalized coordinates (the grid's
last axis lists them from the last spatial axis on), unnormalized by
``align_corners``; ``nearest`` rounds them half to even, ``linear`` weighs the 2 and
``cubic`` the 4 (Keys, a = -0.75) nearest taps per axis. Padding: ``border`` clamps
coordinates and taps into the axis, ``reflection`` reflects them at the borders
(``[-0.5, n - 0.5]``, or ``[0, n - 1]`` with ``align_corners``), ``zeros`` reads 0
outside. Every tap's flat index is clamped before ``take`` reads it, so no read leaves
the input. The input's spatial shape must be static.
"""
import numpy as np

from rvm.relax.frontend.onnx.common import OnnxImportError, is_float
from rvm.relax.frontend.onnx.ops_math import scalar
from rvm.relax.frontend.onnx.registry import converter
from rvm.relax.op import binary, index, manipulate, search, statistical, unary

_MODES = {"linear": "linear", "bilinear": "linear", "nearest": "nearest", "cubic": "cubic",
          "bicubic": "cubic"}
_A = -0.75


class _Axis:
    """Arithmetic on the ``[N, O...]`` coordinate tensors of one spatial axis."""

    def __init__(self, ctx, dtype):
        self.ctx, self.dtype = ctx, dtype

    def c(self, value):
        return scalar(self.ctx, value, self.dtype)

    def emit(self, expr):
        return self.ctx.emit(expr)

    def reflect(self, x, low, high):
        """``x`` reflected at ``low`` and ``high`` until inside, as onnx's reference
        reflects: the triangle wave ``low + (y if y <= span else 2 span - y)`` of
        ``y = (x - low) mod 2 span``."""
        span = high - low
        if span <= 0:
            return self.emit(binary.multiply(x, self.c(0.0)))
        y = self.emit(binary.floor_mod(binary.subtract(x, self.c(low)), self.c(2.0 * span)))
        back = binary.subtract(self.c(2.0 * span), y)
        return self.emit(binary.add(self.c(low), search.where(
            binary.less_equal(y, self.c(span)), y, back)))


def _weights(ax, d, mode):
    """The interpolation weights of taps at distance ``d`` from the sampled position."""
    d = ax.emit(unary.abs(d))
    if mode == "linear":
        return ax.emit(binary.subtract(ax.c(1.0), d))
    near = binary.add(binary.multiply(binary.multiply(binary.subtract(
        binary.multiply(ax.c(_A + 2), d), ax.c(_A + 3)), d), d), ax.c(1.0))
    far = binary.subtract(binary.multiply(binary.add(binary.multiply(
        binary.subtract(binary.multiply(ax.c(_A), d), ax.c(5 * _A)), d), ax.c(8 * _A)), d),
        ax.c(4 * _A))
    return ax.emit(search.where(binary.less_equal(d, ax.c(1.0)), near, far))


_OFFSETS = {"nearest": [0.0], "linear": [0.0, 1.0], "cubic": [-1.0, 0.0, 1.0, 2.0]}


@converter("GridSample")
def _grid_sample(ctx, inputs, attrs):
    x, grid = ctx.tensor(inputs[0]), ctx.tensor(inputs[1])
    dims, dtype = ctx.shape(x), ctx.dtype(x)
    spatial = dims[2:]
    if not all(isinstance(d, int) for d in spatial):
        raise OnnxImportError(f"GridSample needs static spatial dimensions, got {dims}")
    if not is_float(dtype) or ctx.dtype(grid) != dtype:
        raise OnnxImportError(f"GridSample expects float input and grid of one dtype, got "
                              f"{dtype} and {ctx.dtype(grid)}")
    mode = _MODES.get(attrs.get("mode", "linear" if ctx.opset >= 20 else "bilinear"))
    padding = attrs.get("padding_mode", "zeros")
    if mode is None or padding not in ("zeros", "border", "reflection"):
        raise OnnxImportError(f"GridSample's mode {attrs.get('mode')!r} or padding_mode "
                              f"{padding!r} is not one of {sorted(_MODES)} and zeros, border, "
                              "reflection")
    aligned = bool(attrs.get("align_corners", 0))
    rank = len(spatial)
    gdims = ctx.shape(grid)
    if len(gdims) != rank + 2 or gdims[-1] != rank:
        raise OnnxImportError(f"GridSample's grid must be [N, {rank} spatial dims..., {rank}] "
                              f"for an input of shape {dims}, got {gdims}")
    ax = _Axis(ctx, dtype)
    per_axis = []
    for s, length in enumerate(spatial):
        g = ctx.emit(manipulate.squeeze(ctx.emit(index.strided_slice(
            grid, [rank + 1], [rank - 1 - s], [rank - s])), [rank + 1]))
        if aligned:  # (g + 1) / 2 * (n - 1)
            pos = binary.multiply(binary.add(g, ax.c(1.0)), ax.c((length - 1) / 2))
        else:  # ((g + 1) * n - 1) / 2
            pos = binary.divide(binary.subtract(binary.multiply(binary.add(g, ax.c(1.0)),
                                                                ax.c(float(length))),
                                                ax.c(1.0)), ax.c(2.0))
        pos = ctx.emit(pos)
        if mode == "nearest":
            pos = ctx.emit(unary.round(pos))
        low, high = (0.0, length - 1.0) if aligned else (-0.5, length - 0.5)
        if padding == "border":
            pos = ctx.emit(unary.clip(pos, 0.0, float(length - 1)))
        elif padding == "reflection":
            pos = ax.reflect(pos, low, high)
        # the taps of this axis along a new last axis: [N, O..., T]
        pos = ctx.emit(manipulate.expand_dims(pos, [rank + 1]))
        offsets = ctx.tensor(np.array(_OFFSETS[mode], dtype))
        taps = pos if mode == "nearest" else \
            ctx.emit(binary.add(unary.floor(pos), offsets))
        weight = None if mode == "nearest" else \
            _weights(ax, ctx.emit(binary.subtract(taps, pos)), mode)
        if padding == "reflection" and mode != "nearest":
            taps = ax.reflect(taps, low, high)
        if padding == "zeros":
            valid = binary.logical_and(binary.greater_equal(taps, ax.c(0.0)),
                                       binary.less_equal(taps, ax.c(float(length - 1))))
            weight = ctx.emit(search.where(valid, ax.c(1.0) if weight is None else weight,
                                           ax.c(0.0)))
        where = ctx.emit(unary.clip(unary.astype(taps, "int64"), 0, length - 1))
        per_axis.append((where, weight))
    return _gather(ctx, x, dims, gdims, per_axis, dtype)


def _gather(ctx, x, dims, gdims, per_axis, dtype):
    """The weighted sum over every combination of taps: each axis's taps broadcast along
    an axis of their own, one take of them all, summed over the tap axes."""
    batch, channels, spatial = dims[0], dims[1], dims[2:]
    rank, size = len(spatial), int(np.prod(spatial))
    flat = ctx.emit(manipulate.reshape(x, [batch, channels, size]))
    flat = ctx.emit(manipulate.permute_dims(flat, [0, 2, 1]))
    flat = ctx.emit(manipulate.reshape(flat, [batch * size, channels]))
    out_rank = len(gdims) - 1  # N and the output's spatial axes
    where = ctx.tensor((np.arange(batch, dtype="int64") * size).reshape(
        [batch] + [1] * (out_rank - 1 + rank)))
    weight = None
    for s, (taps, w) in enumerate(per_axis):
        shape = ctx.shape(taps)[:-1] + [1] * rank
        shape[out_rank + s] = ctx.shape(taps)[-1]
        stride = int(np.prod(spatial[s + 1:]))
        taps = ctx.emit(manipulate.reshape(taps, shape))
        where = ctx.emit(binary.add(where, binary.multiply(taps, scalar(ctx, stride, "int64"))))
        if w is not None:
            w = ctx.emit(manipulate.reshape(w, shape))
            weight = w if weight is None else ctx.emit(binary.multiply(weight, w))
    value = ctx.emit(index.take(flat, where, axis=0))  # [N, O..., T..., C]
    if weight is not None:
        value = ctx.emit(binary.multiply(value, manipulate.expand_dims(weight, [out_rank + rank])))
    value = ctx.emit(statistical.sum(value, axis=list(range(out_rank, out_rank + rank))))
    order = [0, out_rank] + list(range(1, out_rank))
    return ctx.emit(manipulate.permute_dims(value, order))
