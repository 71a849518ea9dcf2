"""matmul: (batched) matrix multiplication with optional transposes, numpy's rules."""
from rvm.te.operation import compute, reduce_axis, sum as te_sum
from rvm.topi.broadcast import broadcast_shape
from rvm.topi.utils import accumulation_dtype, const_value, named, narrowed
from rvm.tir import op as _op


def _check_inner(ka, kb, what):
    ca, cb = const_value(ka), const_value(kb)
    if ca is not None and cb is not None and ca != cb:
        raise ValueError(f"{what}: reduction dimensions differ: {ca} vs {cb}")


def matmul(a, b, transpose_a=False, transpose_b=False, out_dtype=None, name=None):
    """``a @ b`` over the last two axes (leading batch axes broadcast).

    As in numpy, a 1-D ``a`` is a row vector and a 1-D ``b`` a column vector,
    and their axis is dropped from the result. With ``transpose_b`` the
    second operand is read as ``b[..., j, k]`` (dense layout). A narrow float result
    (float16, bfloat16 ...) accumulates in float32 and is rounded once.

    >>> from rvm.te.operation import placeholder
    >>> C = matmul(placeholder((2, 3), name="A"), placeholder((3, 4), name="B"))
    >>> [d.value for d in C.shape], C.name
    ([2, 4], 'T_matmul_NN')
    >>> [d.value for d in matmul(placeholder((3,), name="v"), placeholder((3, 4), name="B")).shape]
    [4]
    """
    if not a.shape or not b.shape:
        raise ValueError("matmul expects tensors of rank >= 1, got a scalar")
    a_vec, b_vec = len(a.shape) == 1, len(b.shape) == 1
    if a_vec:
        n, ka = None, a.shape[0]
    else:
        n, ka = (a.shape[-1], a.shape[-2]) if transpose_a else (a.shape[-2], a.shape[-1])
    if b_vec:
        kb, m = b.shape[0], None
    else:
        kb, m = (b.shape[-1], b.shape[-2]) if transpose_b else (b.shape[-2], b.shape[-1])
    _check_inner(ka, kb, "matmul")
    batch = broadcast_shape(a.shape[:-2], b.shape[:-2], "matmul")
    out_dtype = out_dtype or a.dtype
    acc_dtype = accumulation_dtype(out_dtype)
    k = reduce_axis((_op.const(0, ka.dtype), ka), name="k")
    tag = ("T" if transpose_a else "N") + ("T" if transpose_b else "N")

    def pick(t, batch_idx, row, col, transpose):
        if len(t.shape) == 1:
            return t[(col if row is None else row,)]
        offset = len(batch) - (len(t.shape) - 2)
        lead = []
        for q, dim in enumerate(t.shape[:-2]):
            stretched = const_value(dim) == 1 and const_value(batch[offset + q]) != 1
            lead.append(_op.const(0, dim.dtype) if stretched else batch_idx[offset + q])
        return t[tuple(lead + ([col, row] if transpose else [row, col]))]

    def fcompute(*idx):
        idx = list(idx)
        j = None if b_vec else idx.pop()
        i = None if a_vec else idx.pop()
        lhs = pick(a, idx, i, k.var, transpose_a)
        rhs = pick(b, idx, k.var, j, transpose_b)
        return te_sum(_op.cast(lhs, acc_dtype) * _op.cast(rhs, acc_dtype), axis=k)

    shape = list(batch) + [d for d in (n, m) if d is not None]
    names = [f"i{d}" for d in range(len(shape))]
    out = compute(shape, named(fcompute, names), name=name or f"T_matmul_{tag}")
    return narrowed(out, out_dtype, f"{out.name}_{out_dtype}")
