"""ONNX DFT as matrix products: a discrete Fourier transform along one axis is real-linear
in the real and imaginary parts of its input, so it is ``re @ A + im @ B`` with matrices
computed at import by numpy's FFT of the identity (forward, inverse, one-sided and the
inverse of a one-sided transform, with ``dft_length`` padding or truncating the axis).

The axis (an attribute before opset 20, an input from 20) may be a run-time value when
every axis gives the same output shape: each axis's transform is computed and the
value picks one (a value out of range fails at run time); ``dft_length`` decides the
output's length and must be known.
"""
import numpy as np

from rvm.relax.frontend.onnx.common import OnnxImportError, is_float
from rvm.relax.frontend.onnx.ops_math import scalar
from rvm.relax.frontend.onnx.ops_resize import apply_matrix
from rvm.relax.frontend.onnx import runtime_shape
from rvm.relax.frontend.onnx.registry import converter
from rvm.relax.frontend.onnx.runtime_shape import int64_tensor, is_run_time
from rvm.relax.op import binary, index, join, manipulate, search, unary


def _transform(n_in, length, inverse, onesided):
    """``fn(v)``: the transform of the rows of ``v`` (complex, ``n_in`` long)."""
    if inverse and onesided:
        return lambda v: np.fft.irfft(v, n=length, axis=-1)
    if inverse:
        return lambda v: np.fft.ifft(v, n=length, axis=-1)
    if onesided:
        return lambda v: np.fft.fft(v, n=length, axis=-1)[..., :length // 2 + 1]
    return lambda v: np.fft.fft(v, n=length, axis=-1)


def _along(ctx, parts, axis, rank, length, inverse, onesided, dtype):
    """The transform of ``parts`` (the real part and the imaginary part or None, each
    without the trailing complex axis) along ``axis``: ``[re]`` or ``[re, im]``."""
    n_in = ctx.shape(parts[0])[axis]
    fn = _transform(n_in, length, inverse, onesided)
    eye = np.eye(n_in)
    maps = [fn(eye.astype(complex)), fn(1j * eye) if parts[1] is not None else None]
    outs = []
    for take in (np.real, np.imag) if not (inverse and onesided) else (np.real,):
        total = None
        for part, matrix in zip(parts, maps):
            if part is None:
                continue
            weights_t = take(matrix).astype(dtype if is_float(dtype) else "float32")
            term = apply_matrix(ctx, part, axis, rank, ctx.tensor(weights_t), dtype)
            total = term if total is None else ctx.emit(binary.add(total, term))
        outs.append(total)
    return outs


@converter("DFT")
def _dft(ctx, inputs, attrs):
    x = ctx.tensor(inputs[0])
    dims, dtype = ctx.shape(x), ctx.dtype(x)
    rank = len(dims) - 1  # without the trailing complex axis
    if dims[-1] not in (1, 2):
        raise OnnxImportError(f"DFT's input must end in an axis of 1 (real) or 2 (complex), "
                              f"got {dims}")
    inverse, onesided = bool(attrs.get("inverse", 0)), bool(attrs.get("onesided", 0))
    given = inputs[1] if len(inputs) > 1 else None
    fixed = None if given is None else int(ctx.constant(given, "DFT's dft_length").reshape(()))
    if ctx.opset >= 20:
        axis_value = inputs[2] if len(inputs) > 2 and inputs[2] is not None else \
            np.array(-2, "int64")
    else:
        axis_value = np.array(attrs.get("axis", 1), "int64")
    if dtype != "float64":  # the matrices' sums in float64, as numpy's FFT computes them
        x = ctx.emit(unary.astype(x, "float64"))
    re = ctx.emit(manipulate.squeeze(ctx.emit(index.strided_slice(x, [rank], [0], [1])),
                                     [rank]))
    im = None
    if dims[-1] == 2:
        im = ctx.emit(manipulate.squeeze(ctx.emit(index.strided_slice(x, [rank], [1], [2])),
                                         [rank]))

    def transform(axis):
        n = dims[axis]
        length = fixed if fixed is not None else 2 * (n - 1) if inverse and onesided else n
        if length < 1:
            raise OnnxImportError(f"DFT's length along axis {axis} must be positive, got "
                                  f"{length}")
        outs = _along(ctx, [re, im], axis, rank, length, inverse, onesided, "float64")
        outs = [ctx.emit(manipulate.expand_dims(o, [rank])) for o in outs]
        out = outs[0] if len(outs) == 1 else ctx.emit(join.concat(outs, rank))
        return out if dtype == "float64" else ctx.emit(unary.astype(out, dtype))

    def normalized(axis):
        # opset 20 counts the trailing complex axis in a negative axis
        axis = axis + rank + 1 if axis < 0 else axis
        if not 0 <= axis < rank:
            raise OnnxImportError(f"DFT's axis must be in [{-rank - 1}, {rank - 1}) "
                                  f"without the last, got {axis}")
        return axis

    if is_run_time(axis_value) and (onesided or fixed is not None):
        ctx.constant(axis_value, "DFT's axis (which decides the output's shape when "
                                 "onesided or with dft_length)")
    if not is_run_time(axis_value):
        return transform(normalized(int(np.asarray(axis_value).reshape(()))))
    candidates = {a: transform(a) for a in range(rank)}
    axis = ctx.emit(manipulate.reshape(int64_tensor(ctx, axis_value), []))
    axis = ctx.emit(search.where(binary.less(axis, scalar(ctx, 0, "int64")),
                                 binary.add(axis, scalar(ctx, rank + 1, "int64")), axis))
    inside = binary.logical_and(binary.greater_equal(axis, scalar(ctx, 0, "int64")),
                                binary.less(axis, scalar(ctx, rank, "int64")))
    inside = ctx.emit(manipulate.reshape(unary.astype(inside, "int64"), [1]))
    runtime_shape.shape_vars(ctx, inside, [1], "dft_axis_in_range")
    out = None
    for a, value in candidates.items():
        out = value if out is None else ctx.emit(search.where(
            binary.equal(axis, scalar(ctx, a, "int64")), value, out))
    return out
