"""What the 2-D windowed operators (convolutions, pooling) share: their window attributes
in canonical form, layouts, and output extents.

Attributes are stored as TVM stores them: ``strides``/``dilation``/``pool_size``
as pairs, ``padding`` as (top, left, bottom, right).
"""
from rvm.relax.op.attrs import int_tuple_attr
from rvm.relax.op.infer_util import as_dim, dim_value, dims_text
from rvm.tir import op as tir_op
from rvm.tir.layout import layout


def pair_attr(value, op_name, attr, minimum=1):
    """An int or 1-2 ints as a pair of ints >= ``minimum``."""
    out = int_tuple_attr(value, op_name, attr, (1, 2), lambda v: v * 2 if len(v) == 1 else v)
    if any(v < minimum for v in out):
        what = "positive" if minimum == 1 else f">= {minimum}"
        raise ValueError(f"{op_name}: '{attr}' must be {what}, got {list(out)}")
    return out


def padding_attr(value, op_name, attr="padding"):
    """An int, 2 ints (height, width) or 4 ints (top, left, bottom, right) as 4 ints >= 0."""
    def expand(v):
        return v * 4 if len(v) == 1 else v * 2 if len(v) == 2 else v

    out = int_tuple_attr(value, op_name, attr, (1, 2, 4), expand)
    if any(v < 0 for v in out):
        raise ValueError(f"{op_name}: '{attr}' must be non-negative, got {list(out)}")
    return out


def layout_attr(value, op_name, attr, expected):
    """``value`` as the name of a layout with the axes of ``expected`` (e.g. "NCHW")."""
    try:
        return layout(value, expected).name
    except ValueError as err:
        raise ValueError(f"{op_name}: '{attr}': {err}") from None


def spatial_dims(values, layout_name, letters="NCHW"):
    """The dimensions of a tensor in ``layout_name`` reordered to ``letters``."""
    lay = layout(layout_name)
    return [values[lay.index_of(a)] for a in letters]


def in_layout(values, letters, layout_name):
    """Dimensions given in the order of ``letters`` reordered to ``layout_name``."""
    return [values[letters.index(a)] for a in layout_name]


def window_out(op_name, what, size, kernel, stride, pad_before, pad_after, dilation,
               ceil_mode=False):
    """The number of window positions along an axis of ``size``: ``(size + pads - dilation *
    (kernel - 1) - 1) // stride + 1`` (rounded up with ``ceil_mode``, where a window must
    still start inside the input or its leading padding, as in PyTorch)."""
    span = size + pad_before + pad_after - dilation * (kernel - 1) - 1
    if ceil_mode:
        out = tir_op.floordiv(span + (stride - 1), stride) + 1
        if dim_value(as_dim(size)) is not None:
            last_start = (as_dim(out) - 1) * stride
            if dim_value(as_dim(last_start)) >= dim_value(as_dim(size)) + pad_before:
                out = out - 1
    else:
        out = tir_op.floordiv(span, stride) + 1
    out = as_dim(out)
    if dim_value(out) is not None and dim_value(out) <= 0:
        raise ValueError(f"{op_name}: the {what} window (size {dim_value(as_dim(kernel))}, "
                         f"dilation {dilation}) does not fit the input {what} "
                         f"{dims_text([as_dim(size)])[1:-1]} with padding "
                         f"{pad_before}+{pad_after}: output {what} would be {dim_value(out)}")
    return out
