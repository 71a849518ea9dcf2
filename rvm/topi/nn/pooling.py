"""2-D pooling in any primal layout: max and average over windows (padding never counts for
max; for average it counts in the divisor only with ``count_include_pad``), and adaptive
average pooling to a given output size, with PyTorch's window rules.
"""
import math

from rvm.tir import op as _op
from rvm.tir.arith import simplify_size
from rvm.tir.layout import layout
from rvm.te import operation as _te
from rvm.te.operation import compute, reduce_axis
from rvm.topi.nn.pad import pad
from rvm.topi.utils import const_value, named


def pool_out(size, kernel, stride, dilation, pad_before, pad_after, ceil_mode):
    """The number of windows along an axis of ``size`` (PyTorch's rule with ``ceil_mode``: the
    last window must start inside the input or its leading padding)."""
    span = size + pad_before + pad_after - dilation * (kernel - 1) - 1
    if not ceil_mode:
        return simplify_size(span // stride + 1)
    out = simplify_size((span + stride - 1) // stride + 1)
    if const_value(out) is not None and const_value(size) is not None and \
            (const_value(out) - 1) * stride >= const_value(size) + pad_before:
        out = out - 1
    return simplify_size(out)


def _taps(start, kernel, dilation, low, high):
    """How many of ``start + r * dilation`` (r < kernel) lie in [low, high)."""
    def ceil_div(a):
        return (a + (dilation - 1)) // dilation if dilation != 1 else a

    first = _op.max(ceil_div(low - start), 0) if dilation != 1 else _op.max(low - start, 0)
    last = _op.min(ceil_div(high - start), kernel)
    return _op.max(last - first, 0)


def pool2d(data, kernel, stride, dilation, padding, pool_type, ceil_mode=False,
           layout="NCHW", count_include_pad=True, out_layout=None):  # noqa: A002
    """``pool_type`` ("max" or "avg") pooling over ``kernel`` windows (TVM's topi.nn.pool2d);
    ``padding`` is (top, left, bottom, right).

    >>> from rvm.te.operation import placeholder
    >>> x = placeholder((1, 2, 7, 7), name="x")
    >>> [d.value for d in pool2d(x, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), "max").shape]
    [1, 2, 4, 4]
    """
    if pool_type not in ("max", "avg"):
        raise ValueError(f"pool2d: pool_type must be 'max' or 'avg', got {pool_type!r}")
    d_lay = _layout(layout)
    o_lay = _layout(out_layout or layout)
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    pt, pl, pb, pr = padding
    h, w = (data.shape[d_lay.index_of(a)] for a in "HW")
    oh = pool_out(h, kh, sh, dh, pt, pb, ceil_mode)
    ow = pool_out(w, kw, sw, dw, pl, pr, ceil_mode)
    ry = reduce_axis((_op.const(0, h.dtype), _op.const(kh, h.dtype)), name="ry")
    rx = reduce_axis((_op.const(0, w.dtype), _op.const(kw, w.dtype)), name="rx")

    low = _op.const(-math.inf, data.dtype) if data.dtype.is_float else \
        _op.min_value(data.dtype)
    padded = _padded(data, d_lay, (kh, kw), (sh, sw), (dh, dw), (pt, pl), (oh, ow),
                     low if pool_type == "max" else _op.const(0, data.dtype))

    def window(at):
        y = at["H"] * sh - pt + ry.var * dh
        x = at["W"] * sw - pl + rx.var * dw
        if padded is not None:
            # the padded copy covers every window: no test per tap
            return True, padded[tuple(y + pt if a == "H" else x + pl if a == "W" else at[a]
                                      for a in d_lay.name)]
        inside = _op.all(y >= 0, y < h, x >= 0, x < w)
        return inside, data[tuple(y if a == "H" else x if a == "W" else at[a]
                                  for a in d_lay.name)]

    def fmax(*idx):
        inside, value = window(dict(zip(o_lay.name, idx)))
        if inside is True:
            return _te.max(value, axis=[ry, rx], init=low)
        return _te.max(_op.if_then_else(inside, value, low), axis=[ry, rx], init=low)

    def fsum(*idx):
        inside, value = window(dict(zip(o_lay.name, idx)))
        if inside is True:
            return _te.sum(value, axis=[ry, rx])
        return _te.sum(_op.if_then_else(inside, value, _op.const(0, data.dtype)),
                       axis=[ry, rx])

    shape = _out_shape(data, d_lay, o_lay, oh, ow)
    names = [f"ax{k}" for k in range(4)]
    if pool_type == "max":
        return compute(shape, named(fmax, names), name="pool_max")
    total = compute(shape, named(fsum, names), name="pool_sum")

    def favg(*idx):
        at = dict(zip(o_lay.name, idx))
        y0, x0 = at["H"] * sh - pt, at["W"] * sw - pl
        if count_include_pad:
            count = _taps(y0, kh, dh, -pt, h + pb) * _taps(x0, kw, dw, -pl, w + pr)
        else:
            count = _taps(y0, kh, dh, 0, h) * _taps(x0, kw, dw, 0, w)
        return total[idx] / _op.cast(_op.max(count, 1), data.dtype)

    return compute(shape, named(favg, names), name="pool_avg")


def _padded(data, d_lay, kernel, stride, dilation, before, out, value):
    """``data`` padded with ``value`` so that every window lies inside it (TVM's pool pads
    its input the same way), or None when no window leaves the input or a size is not a
    constant. One padded copy costs a pass over the input; the windows then read it without
    a range test per tap, which kept the pool's loop from vectorizing."""
    sizes = [const_value(data.shape[d_lay.index_of(a)]) for a in "HW"]
    amounts = {}
    for axis, size, k, st, dl, b, o in zip("HW", sizes, kernel, stride, dilation, before,
                                            out):
        o = const_value(o)
        if size is None or o is None or const_value(b) is None:
            return None
        after = max(0, (o - 1) * st + (k - 1) * dl + 1 - size - b)
        amounts[axis] = (const_value(b), after)
    if all(b == 0 and a == 0 for b, a in amounts.values()):
        return None
    pad_before = [amounts.get(a, (0, 0))[0] for a in d_lay.name]
    pad_after = [amounts.get(a, (0, 0))[1] for a in d_lay.name]
    return pad(data, pad_before, pad_after, value, name="pad_temp")


def _layout(name):
    return layout(name, "NCHW")


def _out_shape(data, d_lay, o_lay, oh, ow):
    sizes = {"N": data.shape[d_lay.index_of("N")], "C": data.shape[d_lay.index_of("C")],
             "H": oh, "W": ow}
    return [sizes[a] for a in o_lay.name]


def adaptive_pool(data, output_size, pool_type="avg", layout="NCHW",  # noqa: A002
                  out_layout=None):
    """Pooling of ``data`` into ``output_size`` (height, width) cells; cell i of an axis of
    size ``n`` covers ``[floor(i * n / out), ceil((i + 1) * n / out))`` (TVM's
    topi.nn.adaptive_pool, PyTorch's AdaptiveAvgPool2d).

    >>> from rvm.te.operation import placeholder
    >>> [d.value for d in adaptive_pool(placeholder((1, 2, 7, 5), name="x"), (3, 1)).shape]
    [1, 2, 3, 1]
    """
    if pool_type not in ("max", "avg"):
        raise ValueError(f"adaptive_pool: pool_type must be 'max' or 'avg', got {pool_type!r}")
    d_lay, o_lay = _layout(layout), _layout(out_layout or layout)
    h, w = (data.shape[d_lay.index_of(a)] for a in "HW")
    oh, ow = (_op.convert(s, h.dtype) for s in output_size)

    def bounds(i, size, out):
        return (i * size) // out, ((i + 1) * size + out - 1) // out

    def widest(size, out):
        if const_value(size) is not None and const_value(out) is not None:
            s, o = const_value(size), const_value(out)
            return max(-(-((i + 1) * s) // o) - (i * s) // o for i in range(o))
        return simplify_size((size + out - 1) // out + 1)

    ry = reduce_axis((_op.const(0, h.dtype), _op.convert(widest(h, oh), h.dtype)), name="ry")
    rx = reduce_axis((_op.const(0, w.dtype), _op.convert(widest(w, ow), w.dtype)), name="rx")
    reducer = _te.max if pool_type == "max" else _te.sum
    init = _op.const(-math.inf, data.dtype) if pool_type == "max" else None

    def window(idx):
        at = dict(zip(o_lay.name, idx))
        (y0, y1), (x0, x1) = bounds(at["H"], h, oh), bounds(at["W"], w, ow)
        src = tuple(y0 + ry.var if a == "H" else x0 + rx.var if a == "W" else at[a]
                    for a in d_lay.name)
        return data[src], _op.all(ry.var < y1 - y0, rx.var < x1 - x0), (y1 - y0) * (x1 - x0)

    def fpool(*idx):
        value, inside, _ = window(idx)
        return reducer(value, axis=[ry, rx], where=inside, init=init)

    shape = _out_shape(data, d_lay, o_lay, oh, ow)
    names = [f"ax{k}" for k in range(4)]
    pooled = compute(shape, named(fpool, names), name=f"adaptive_pool_{pool_type}")
    if pool_type == "max":
        return pooled
    return compute(shape, named(lambda *i: pooled[i] / _op.cast(window(i)[2], data.dtype),
                                names), name="adaptive_pool_avg_div")
