"""2-D convolutions: ``R.nn.conv2d`` and ``R.nn.conv2d_transpose``, with strides, padding,
dilation, groups and layouts (any order of the axes: NCHW, NHWC; OIHW, HWIO, ...).

>>> from rvm.relax.expr import Var
>>> from rvm.relax.struct_info import TensorStructInfo
>>> call = conv2d(Var("x", TensorStructInfo((1, 3, 8, 8), "float32")),
...               Var("w", TensorStructInfo((4, 3, 3, 3), "float32")), padding=1)
>>> call.attrs["padding"], call.attrs["out_layout"]
((1, 1, 1, 1), 'NCHW')
"""
from rvm.relax.expr import Call
from rvm.relax.op.attrs import dtype_attr, int_attr
from rvm.relax.op.infer_util import (
    as_dim,
    attr,
    check_arity,
    check_dim_match,
    check_rank,
    dim_value,
    tensor_arg,
    unify_dtype,
)
from rvm.relax.op.nn.spatial import (
    in_layout,
    layout_attr,
    padding_attr,
    pair_attr,
    spatial_dims,
    window_out,
)
from rvm.relax.op.registry import Op, register_op
from rvm.relax.struct_info import TensorStructInfo


def _operands(call, name):
    check_arity(call, 2, name)
    data, weight = tensor_arg(call, 0, name, "data"), tensor_arg(call, 1, name, "weight")
    check_rank(data, 4, name, "data")
    check_rank(weight, 4, name, "weight")
    out_dtype = attr(call, "out_dtype")
    dtype = out_dtype if out_dtype is not None else unify_dtype(data.dtype, weight.dtype, name)
    groups = attr(call, "groups", 1)
    if groups <= 0:
        raise ValueError(f"{name}: 'groups' must be positive, got {groups}")
    if data.shape_values is None or weight.shape_values is None:
        return None, None, dtype, groups
    x = spatial_dims(data.shape_values, attr(call, "data_layout"))
    w = spatial_dims(weight.shape_values, attr(call, "kernel_layout"), _KERNEL[name])
    return x, w, dtype, groups


_KERNEL = {"relax.nn.conv2d": "OIHW", "relax.nn.conv2d_transpose": "IOHW"}


def _infer_conv2d(call, ctx):
    name = "relax.nn.conv2d"
    x, w, dtype, groups = _operands(call, name)
    if x is None:
        return TensorStructInfo(None, dtype, 4)
    n, c, h, wd = x
    o, i, kh, kw = w
    if dim_value(c) is not None and dim_value(c) % groups:
        raise ValueError(f"{name}: the {dim_value(c)} data channels are not divisible by "
                         f"groups={groups}")
    if dim_value(c) is not None and dim_value(i) is not None and \
            dim_value(c) != dim_value(i) * groups:
        raise ValueError(f"{name}: argument 'weight' expects {dim_value(c) // groups} input "
                         f"channels per group (data has {dim_value(c)} channels, "
                         f"groups={groups}), got {dim_value(i)}")
    if dim_value(o) is not None and dim_value(o) % groups:
        raise ValueError(f"{name}: the {dim_value(o)} output channels of 'weight' are not "
                         f"divisible by groups={groups}")
    (sh, sw), (dh, dw) = attr(call, "strides"), attr(call, "dilation")
    pt, pl, pb, pr = attr(call, "padding")
    oh = window_out(name, "height", h, kh, sh, pt, pb, dh)
    ow = window_out(name, "width", wd, kw, sw, pl, pr, dw)
    return TensorStructInfo(in_layout([n, o, oh, ow], "NCHW", attr(call, "out_layout")), dtype)


def _infer_conv2d_transpose(call, ctx):
    name = "relax.nn.conv2d_transpose"
    x, w, dtype, groups = _operands(call, name)
    if x is None:
        return TensorStructInfo(None, dtype, 4)
    n, c, h, wd = x
    i, o, kh, kw = w
    check_dim_match(c, i, name, "argument 'weight' input channels (its I axis) must equal "
                                "the data channels")
    if dim_value(c) is not None and dim_value(c) % groups:
        raise ValueError(f"{name}: the {dim_value(c)} data channels are not divisible by "
                         f"groups={groups}")
    (sh, sw), (dh, dw) = attr(call, "strides"), attr(call, "dilation")
    pt, pl, pb, pr = attr(call, "padding")
    oph, opw = attr(call, "output_padding")
    if oph >= max(sh, dh) or opw >= max(sw, dw):
        raise ValueError(f"{name}: 'output_padding' {[oph, opw]} must be smaller than the "
                         f"stride or the dilation ({[sh, sw]}, {[dh, dw]})")
    oh = as_dim((h - 1) * sh - pt - pb + dh * (kh - 1) + oph + 1)
    ow = as_dim((wd - 1) * sw - pl - pr + dw * (kw - 1) + opw + 1)
    for what, extent in (("height", oh), ("width", ow)):
        if dim_value(extent) is not None and dim_value(extent) <= 0:
            raise ValueError(f"{name}: the output {what} would be {dim_value(extent)}; the "
                             "padding is larger than the transposed window")
    return TensorStructInfo(in_layout([n, as_dim(o * groups), oh, ow], "NCHW",
                                      attr(call, "out_layout")), dtype)


_CONV_ATTRS = {"strides": (1, 1), "padding": (0, 0, 0, 0), "dilation": (1, 1), "groups": 1,
               "data_layout": "NCHW", "kernel_layout": "OIHW", "out_layout": "NCHW",
               "out_dtype": None}
register_op("relax.nn.conv2d", _infer_conv2d, description="2-D convolution", attrs=_CONV_ATTRS)
register_op("relax.nn.conv2d_transpose", _infer_conv2d_transpose,
            description="2-D transposed convolution",
            attrs={**_CONV_ATTRS, "output_padding": (0, 0), "kernel_layout": "IOHW"})


def _conv_attrs(name, strides, padding, dilation, groups, data_layout, kernel_layout,
                out_layout, out_dtype, kernel_axes, output_padding=None):
    data_layout = layout_attr(data_layout, name, "data_layout", "NCHW")
    attrs = {
        "strides": pair_attr(strides, name, "strides"),
        "padding": padding_attr(padding, name),
    }
    if output_padding is not None:
        attrs["output_padding"] = pair_attr(output_padding, name, "output_padding", minimum=0)
    attrs.update({
        "dilation": pair_attr(dilation, name, "dilation"),
        "groups": int_attr(groups, name, "groups"),
        "data_layout": data_layout,
        "kernel_layout": layout_attr(kernel_layout, name, "kernel_layout", kernel_axes),
        "out_layout": layout_attr(out_layout or data_layout, name, "out_layout", "NCHW"),
        "out_dtype": dtype_attr(out_dtype, name, "out_dtype"),
    })
    return attrs


def conv2d(data, weight, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
           data_layout="NCHW", kernel_layout="OIHW", out_layout=None, out_dtype=None):
    """The 2-D convolution of ``data`` (NCHW) with ``weight`` (OIHW, ``I`` = channels per
    group); ``padding`` is 1, 2 (height, width) or 4 (top, left, bottom, right) ints
    (``relax.nn.conv2d``)."""
    attrs = _conv_attrs("relax.nn.conv2d", strides, padding, dilation, groups, data_layout,
                        kernel_layout, out_layout, out_dtype, "OIHW")
    return Call(Op.get("relax.nn.conv2d"), [data, weight], attrs=attrs)


def conv2d_transpose(data, weight, strides=(1, 1), padding=(0, 0), output_padding=(0, 0),
                     dilation=(1, 1), groups=1, data_layout="NCHW", kernel_layout="IOHW",
                     out_layout=None, out_dtype=None):
    """The transposed 2-D convolution (the gradient of conv2d with respect to its input):
    ``weight`` is IOHW with ``O`` output channels per group; the output height is ``(H - 1) *
    stride - pad_top - pad_bottom + dilation * (kh - 1) + output_padding + 1``
    (``relax.nn.conv2d_transpose``)."""
    name = "relax.nn.conv2d_transpose"
    attrs = _conv_attrs(name, strides, padding, dilation, groups, data_layout, kernel_layout,
                        out_layout, out_dtype, "IOHW", output_padding)
    return Call(Op.get(name), [data, weight], attrs=attrs)
