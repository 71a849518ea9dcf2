"""Constant padding of a tensor (the first stage of convolutions with padding)."""
from rvm.tir import op as _op
from rvm.tir.arith import simplify_size
from rvm.te.operation import compute
from rvm.topi.utils import axis_names, const_value, named


def pad(data, pad_before, pad_after=None, pad_value=0.0, name="PadInput"):
    """``data`` with ``pad_before[k]``/``pad_after[k]`` elements of ``pad_value`` added before
    and after axis k (``pad_after`` defaults to ``pad_before``); no padding returns ``data``.

    >>> from rvm.te.operation import placeholder
    >>> [d.value for d in pad(placeholder((1, 2, 4, 4), name="x"), [0, 0, 1, 1]).shape]
    [1, 2, 6, 6]
    """
    ndim = len(data.shape)
    pad_after = pad_before if pad_after is None else pad_after
    if len(pad_before) != ndim or len(pad_after) != ndim:
        raise ValueError(f"pad: expected {ndim} padding amounts before and after, got "
                         f"{len(pad_before)} and {len(pad_after)}")
    if all(const_value(p) == 0 for p in list(pad_before) + list(pad_after)):
        return data
    shape = [simplify_size(d + before + after)
             for d, before, after in zip(data.shape, pad_before, pad_after)]
    value = _op.cast(pad_value, data.dtype)

    def fcompute(*i):
        inside, src = [], []
        for k, (idx, dim, before) in enumerate(zip(i, data.shape, pad_before)):
            if const_value(before) == 0 and const_value(pad_after[k]) == 0:
                src.append(idx)
                continue
            src.append(idx - before)
            inside += [idx >= before, idx < dim + before]
        return _op.if_then_else(_op.all(*inside), data[tuple(src)], value)

    return compute(shape, named(fcompute, axis_names("i", ndim)), name=name)
