"""2-D convolutions as direct loop nests in any primal layout (NCHW/NHWC data, OIHW/HWIO/...
kernels): a padding stage when there is padding, then one reduction over input channels
and the window. Grouped and depthwise convolutions index their channel group directly, and
the transposed convolution reads its input where the window lands on it (no per-call
transposes, dilation or flipped kernels).
"""
from rvm.tir import op as _op
from rvm.tir.arith import simplify_size
from rvm.tir.layout import layout
from rvm.te import operation as _te
from rvm.te.operation import compute, reduce_axis
from rvm.topi.nn.pad import pad
from rvm.topi.utils import accumulation_dtype, const_value, named, narrowed


def expand_padding(padding):
    """An int, 2 ints (height, width) or 4 ints (top, left, bottom, right) as 4 ints."""
    if isinstance(padding, int):
        return (padding,) * 4
    padding = tuple(padding)
    if len(padding) == 2:
        return padding * 2
    if len(padding) != 4:
        raise ValueError(f"padding must be an int or 2 or 4 ints, got {padding}")
    return padding


def _pair(value, what):
    pair = (value, value) if isinstance(value, int) else tuple(value)
    if len(pair) == 1:
        pair = pair * 2
    if len(pair) != 2:
        raise ValueError(f"conv2d: {what} must be an int or 2 ints, got {value}")
    return pair


def _dims(tensor, lay, letters):
    return [tensor.shape[lay.index_of(a)] for a in letters]


def _at(lay, **index):
    """Indices in layout ``lay`` from indices named by axis letter."""
    return tuple(index[a] for a in lay.name)


def _names(lay):
    """TVM's loop names for the output axes: nn, ff, yy, xx."""
    return [{"N": "nn", "C": "ff", "H": "yy", "W": "xx"}[a] for a in lay.name]


def _default_kernel_layout(data_layout):
    return {"NCHW": "OIHW", "NHWC": "HWIO"}.get(data_layout, "OIHW")


def conv2d(input, filter, strides, padding, dilation, data_layout="NCHW",  # noqa: A002
           kernel_layout="", out_dtype=None, groups=1, out_layout=None):
    """The convolution of ``input`` with ``filter`` (TVM's topi.nn.conv2d, plus ``groups`` and
    ``out_layout``): filter ``O`` = output channels, ``I`` = input channels per group. A
    narrow float result (float16, bfloat16 ...) accumulates in float32, rounded once.

    >>> from rvm.te.operation import placeholder
    >>> x, w = placeholder((1, 3, 8, 8), name="x"), placeholder((4, 3, 3, 3), name="w")
    >>> [d.value for d in conv2d(x, w, 2, 1, 1).shape]
    [1, 4, 4, 4]
    """
    d_lay = layout(data_layout, "NCHW")
    k_lay = layout(kernel_layout or _default_kernel_layout(data_layout), "OIHW")
    o_lay = layout(out_layout or data_layout, "NCHW")
    (sh, sw), (dh, dw) = _pair(strides, "strides"), _pair(dilation, "dilation")
    pt, pl, pb, pr = expand_padding(padding)
    n, c, h, w = _dims(input, d_lay, "NCHW")
    oc, ic, kh, kw = _dims(filter, k_lay, "OIHW")
    if const_value(c) is not None and const_value(ic) is not None and \
            const_value(c) != const_value(ic) * groups:
        raise ValueError(f"conv2d: filter has {const_value(ic)} input channels per group, "
                         f"data {const_value(c)} channels in {groups} groups")
    out_dtype = out_dtype or input.dtype
    acc_dtype = accumulation_dtype(out_dtype)
    oh = simplify_size((h + pt + pb - (kh - 1) * dh - 1) // sh + 1)
    ow = simplify_size((w + pl + pr - (kw - 1) * dw - 1) // sw + 1)
    zero = _op.const(0, h.dtype)
    padded = pad(input, _at(d_lay, N=zero, C=zero, H=pt, W=pl),
                 _at(d_lay, N=zero, C=zero, H=pb, W=pr))
    rc = reduce_axis((_op.const(0, ic.dtype), ic), name="rc")
    ry = reduce_axis((_op.const(0, kh.dtype), kh), name="ry")
    rx = reduce_axis((_op.const(0, kw.dtype), kw), name="rx")
    per_group = None if groups == 1 else simplify_size(oc // groups)

    def fcompute(*idx):
        at = dict(zip(o_lay.name, idx))
        channel = rc.var if groups == 1 else at["C"] // per_group * ic + rc.var
        value = padded[_at(d_lay, N=at["N"], C=channel, H=at["H"] * sh + ry.var * dh,
                           W=at["W"] * sw + rx.var * dw)]
        weight = filter[_at(k_lay, O=at["C"], I=rc.var, H=ry.var, W=rx.var)]
        return _te.sum(_op.cast(value, acc_dtype) * _op.cast(weight, acc_dtype),
                       axis=[rc, ry, rx])

    out = compute(_at(o_lay, N=n, C=oc, H=oh, W=ow), named(fcompute, _names(o_lay)),
                  name=f"conv2d_{o_lay.name.lower()}")
    return narrowed(out, out_dtype, f"{out.name}_{out_dtype}")


def conv2d_nchw(Input, Filter, stride, padding, dilation, out_dtype=None):  # noqa: N803
    """conv2d of NCHW data with an OIHW filter (TVM's topi.nn.conv2d_nchw)."""
    return conv2d(Input, Filter, stride, padding, dilation, "NCHW", "OIHW", out_dtype)


def conv2d_nhwc(Input, Filter, stride, padding, dilation, out_dtype=None):  # noqa: N803
    """conv2d of NHWC data with an HWIO filter (TVM's topi.nn.conv2d_nhwc)."""
    return conv2d(Input, Filter, stride, padding, dilation, "NHWC", "HWIO", out_dtype)


def group_conv2d_nchw(Input, Filter, stride, padding, dilation, groups,  # noqa: N803
                      out_dtype=None):
    """Grouped conv2d of NCHW data, OIHW filter (TVM's topi.nn.group_conv2d_nchw)."""
    return conv2d(Input, Filter, stride, padding, dilation, "NCHW", "OIHW", out_dtype, groups)


def conv2d_transpose(data, weight, strides, padding, output_padding=(0, 0), dilation=(1, 1),
                     groups=1, data_layout="NCHW", kernel_layout="IOHW", out_layout=None,
                     out_dtype=None):
    """The transposed convolution: each input element scatters ``weight`` (IOHW: ``O`` output
    channels per group) onto the output at stride ``strides``; computed per output element
    as a gather over the input positions whose window covers it.

    >>> from rvm.te.operation import placeholder
    >>> x, w = placeholder((1, 4, 5, 5), name="x"), placeholder((4, 2, 3, 3), name="w")
    >>> [d.value for d in conv2d_transpose(x, w, 2, 1, 1).shape]
    [1, 2, 10, 10]
    """
    d_lay, k_lay = layout(data_layout, "NCHW"), layout(kernel_layout, "OIHW")
    o_lay = layout(out_layout or data_layout, "NCHW")
    (sh, sw), (dh, dw) = _pair(strides, "strides"), _pair(dilation, "dilation")
    oph, opw = _pair(output_padding, "output_padding")
    pt, pl, pb, pr = expand_padding(padding)
    n, c, h, w = _dims(data, d_lay, "NCHW")
    ic, oc, kh, kw = _dims(weight, k_lay, "IOHW")
    out_dtype = out_dtype or data.dtype
    oh = simplify_size((h - 1) * sh - pt - pb + (kh - 1) * dh + oph + 1)
    ow = simplify_size((w - 1) * sw - pl - pr + (kw - 1) * dw + opw + 1)
    per_group = simplify_size(c // groups)
    rc = reduce_axis((_op.const(0, per_group.dtype), per_group), name="rc")
    ry = reduce_axis((_op.const(0, kh.dtype), kh), name="ry")
    rx = reduce_axis((_op.const(0, kw.dtype), kw), name="rx")

    def fcompute(*idx):
        at = dict(zip(o_lay.name, idx))
        # the input row whose window puts tap ry on output row y: (y + pt - ry * dh) / sh
        ty, tx = at["H"] + pt - ry.var * dh, at["W"] + pl - rx.var * dw
        hit = [ty >= 0, tx >= 0, ty < h * sh, tx < w * sw]
        if sh != 1:
            hit.append(_op.floormod(ty, sh) == 0)
        if sw != 1:
            hit.append(_op.floormod(tx, sw) == 0)
        group_of = 0 if groups == 1 else at["C"] // oc
        channel = rc.var if groups == 1 else group_of * per_group + rc.var
        value = data[_at(d_lay, N=at["N"], C=channel, H=ty // sh if sh != 1 else ty,
                         W=tx // sw if sw != 1 else tx)]
        tap = weight[_at(k_lay, I=channel, O=at["C"] if groups == 1 else at["C"] % oc,
                         H=ry.var, W=rx.var)]
        return _te.sum(_op.cast(value, out_dtype) * _op.cast(tap, out_dtype),
                       axis=[rc, ry, rx], where=_op.all(*hit))

    shape = _at(o_lay, N=n, C=simplify_size(oc * groups), H=oh, W=ow)
    return compute(shape, named(fcompute, _names(o_lay)), name="conv2d_transpose")


def conv2d_transpose_nchw(Input, Filter, strides, padding, out_dtype,  # noqa: N803
                          output_padding=(0, 0)):
    """conv2d_transpose of NCHW data with an IOHW filter (TVM's
    topi.nn.conv2d_transpose_nchw)."""
    return conv2d_transpose(Input, Filter, strides, padding, output_padding,
                            out_dtype=out_dtype)
