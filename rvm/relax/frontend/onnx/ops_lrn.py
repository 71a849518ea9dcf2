"""ONNX LRN (local response normalization across channels): each element divided by
``(bias + alpha / size * s) ** beta``, where ``s`` sums the squares of the ``size``
channels around it (``floor((size - 1) / 2)`` before, ``ceil((size - 1) / 2)`` after,
clipped to the channels that exist). The window sum is a reduction over the shifted
views of the zero-padded squares, as pooling's."""
from rvm.relax.frontend.onnx.ops_layout import pad_axis
from rvm.relax.frontend.onnx.ops_math import scalar
from rvm.relax.frontend.onnx.ops_nn import reduce_taps
from rvm.relax.frontend.onnx.registry import converter
from rvm.relax.op import binary, index


@converter("LRN")
def _lrn(ctx, inputs, attrs):
    x = ctx.tensor(inputs[0])
    size = attrs.get("size")
    if not isinstance(size, int) or size < 1:
        raise ValueError(f"LRN's size must be an integer >= 1, got {size!r}")
    if ctx.ndim(x) < 3:
        raise ValueError(f"LRN expects an input of rank >= 3 (N, C, D1, ...), got rank "
                         f"{ctx.ndim(x)}")
    channels = ctx.shape(x)[1]
    if not isinstance(channels, int):
        raise ValueError(f"LRN needs a static channel count, got {channels}")
    dtype = ctx.dtype(x)
    before, after = (size - 1) // 2, size // 2
    squares = pad_axis(ctx, ctx.emit(binary.multiply(x, x)), 1, before, after, "constant", 0)
    views = [ctx.emit(index.strided_slice(squares, [1], [tap], [tap + channels], [1]))
             for tap in range(size)]
    total = reduce_taps(ctx, views, is_max=False)
    alpha, beta = attrs.get("alpha", 1e-4), attrs.get("beta", 0.75)
    base = ctx.emit(binary.add(scalar(ctx, attrs.get("bias", 1.0), dtype), ctx.emit(
        binary.multiply(total, scalar(ctx, alpha / size, dtype)))))
    return ctx.emit(binary.divide(x, ctx.emit(binary.power(base, scalar(ctx, beta, dtype)))))
