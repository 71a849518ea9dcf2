"""ONNX Det: the determinant of each square matrix in the last two axes.

Gaussian elimination with partial pivoting, unrolled over the static size ``n``: at step
``k`` the row at or below ``k`` with the largest ``|a[., k]|`` (the first of equals) is
swapped into row ``k`` (negating the sign when it moves), the pivot multiplies the
determinant, and the rows below lose their multiple of row ``k``. A zero pivot (a
singular matrix) gives 0. Each step is a handful of tensor operators, so ``n`` is
limited to ``MAX_SIZE``.
"""
import numpy as np

from rvm.relax.frontend.onnx.common import is_float
from rvm.relax.frontend.onnx.registry import converter
from rvm.relax.op import binary, index, manipulate, search, statistical, unary

#: Largest matrix size Det unrolls its elimination for.
MAX_SIZE = 16


@converter("Det")
def _det(ctx, inputs, attrs):
    a = ctx.tensor(inputs[0])
    dims, dtype = ctx.shape(a), ctx.dtype(a)
    if len(dims) < 2 or dims[-1] != dims[-2] or not isinstance(dims[-1], int) or \
            not is_float(dtype):
        raise ValueError(f"Det expects float square matrices [..., n, n] of static n, got "
                         f"{dtype}{dims}")
    n = dims[-1]
    if n > MAX_SIZE:
        raise ValueError(f"Det unrolls its elimination for matrices up to {MAX_SIZE} x "
                         f"{MAX_SIZE}, got {n} x {n}")
    wide = dtype if dtype in ("float32", "float64") else "float32"
    if wide != dtype:
        a = ctx.emit(unary.astype(a, wide))
    rows = ctx.tensor(np.arange(n, dtype="int64"))
    one, zero = ctx.tensor(np.array(1.0, wide)), ctx.tensor(np.array(0.0, wide))
    det = None
    for k in range(n):
        a, sign = _pivot(ctx, a, k, n, rows, wide)
        row = ctx.emit(index.take(a, ctx.tensor(np.array(k, "int64")), axis=-2))  # [..., n]
        pivot = ctx.emit(index.take(row, ctx.tensor(np.array([k], "int64")), axis=-1))
        term = ctx.emit(binary.multiply(sign, manipulate.squeeze(pivot, [-1])))
        det = term if det is None else ctx.emit(binary.multiply(det, term))
        if k == n - 1:
            break
        safe = ctx.emit(search.where(binary.equal(pivot, zero), one, pivot))  # [..., 1]
        column = ctx.emit(index.take(a, ctx.tensor(np.array(k, "int64")), axis=-1))
        below = ctx.tensor(np.arange(n) > k)
        factor = ctx.emit(search.where(below, binary.divide(column, safe), zero))  # [..., n]
        a = ctx.emit(binary.subtract(a, binary.multiply(manipulate.expand_dims(factor, [-1]),
                                                        manipulate.expand_dims(row, [-2]))))
    return det if wide == dtype else ctx.emit(unary.astype(det, dtype))


def _pivot(ctx, a, k, n, rows, dtype):
    """``a`` with row ``k`` swapped with the row at or below it of the largest
    ``|a[., k]|`` (the first of equals), and the swap's sign (1 or -1, ``[...]``)."""
    column = ctx.emit(unary.abs(index.take(a, ctx.tensor(np.array(k, "int64")), axis=-1)))
    eligible = ctx.tensor(np.arange(n) >= k)
    column = ctx.emit(search.where(eligible, column, ctx.tensor(np.array(-1.0, dtype))))
    largest = ctx.emit(statistical.max(column, axis=[-1], keepdims=True))
    first = ctx.emit(statistical.min(search.where(
        binary.equal(column, largest), rows, ctx.tensor(np.array(n, "int64"))),
        axis=[-1], keepdims=True))  # [..., 1]: the pivot row
    kk = ctx.tensor(np.array(k, "int64"))
    order = ctx.emit(search.where(binary.equal(rows, kk), first,
                                  search.where(binary.equal(rows, first), kk, rows)))
    spread = ctx.emit(manipulate.broadcast_to(manipulate.expand_dims(order, [-1]),
                                              ctx.shape(a)))
    swapped = ctx.emit(index.gather_elements(a, spread, axis=len(ctx.shape(a)) - 2))
    moved = ctx.emit(manipulate.squeeze(binary.not_equal(first, kk), [-1]))
    sign = ctx.emit(search.where(moved, ctx.tensor(np.array(-1.0, dtype)),
                                 ctx.tensor(np.array(1.0, dtype))))
    return swapped, sign
