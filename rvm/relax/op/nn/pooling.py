"""2-D pooling: ``R.nn.max_pool2d``, ``R.nn.avg_pool2d`` and ``R.nn.adaptive_avg_pool2d``.

>>> from rvm.relax.expr import Var
>>> from rvm.relax.struct_info import TensorStructInfo
>>> max_pool2d(Var("x", TensorStructInfo((1, 3, 8, 8), "float32")), 2, 2).attrs["pool_size"]
(2, 2)
"""
from rvm.relax.expr import Call
from rvm.relax.op.attrs import bool_attr, int_tuple_attr
from rvm.relax.op.infer_util import as_dim, attr, check_arity, check_rank, tensor_arg
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


def _data(call, name):
    check_arity(call, 1, name)
    data = tensor_arg(call, 0, name, "data")
    check_rank(data, 4, name, "data")
    if data.shape_values is None:
        return data, None
    return data, spatial_dims(data.shape_values, attr(call, "layout"))


def _make_pool(kind):
    name = f"relax.nn.{kind}_pool2d"

    def infer(call, ctx):
        data, dims = _data(call, name)
        if dims is None:
            return TensorStructInfo(None, data.dtype, 4)
        n, c, h, w = dims
        (kh, kw), (sh, sw) = attr(call, "pool_size"), attr(call, "strides")
        (dh, dw), ceil = attr(call, "dilation"), attr(call, "ceil_mode", False)
        pt, pl, pb, pr = attr(call, "padding")
        half = (((kh - 1) * dh + 1) // 2, ((kw - 1) * dw + 1) // 2)
        if max(pt, pb) > half[0] or max(pl, pr) > half[1]:
            raise ValueError(f"{name}: 'padding' {list(attr(call, 'padding'))} must be at most "
                             f"half the (dilated) window, {list(half)}, so that every window "
                             "overlaps the input")
        oh = window_out(name, "height", h, kh, sh, pt, pb, dh, ceil)
        ow = window_out(name, "width", w, kw, sw, pl, pr, dw, ceil)
        return TensorStructInfo(in_layout([n, c, oh, ow], "NCHW", attr(call, "out_layout")),
                                data.dtype)

    register_op(name, infer, description=f"2-D {kind} pooling", attrs={
        "pool_size": (1, 1), "strides": (1, 1), "padding": (0, 0, 0, 0), "dilation": (1, 1),
        "ceil_mode": False, "count_include_pad": False, "layout": "NCHW", "out_layout": "NCHW"})

    def build(data, pool_size=(1, 1), strides=(1, 1), padding=(0, 0), dilation=(1, 1),
              ceil_mode=False, count_include_pad=False, layout="NCHW", out_layout=None):
        layout = layout_attr(layout, name, "layout", "NCHW")
        return Call(Op.get(name), [data], attrs={
            "pool_size": pair_attr(pool_size, name, "pool_size"),
            "strides": pair_attr(strides, name, "strides"),
            "padding": padding_attr(padding, name),
            "dilation": pair_attr(dilation, name, "dilation"),
            "ceil_mode": bool_attr(ceil_mode, name, "ceil_mode"),
            "count_include_pad": bool_attr(count_include_pad, name, "count_include_pad"),
            "layout": layout,
            "out_layout": layout_attr(out_layout or layout, name, "out_layout", "NCHW"),
        })

    build.__name__ = build.__qualname__ = f"{kind}_pool2d"
    return build


max_pool2d = _make_pool("max")
max_pool2d.__doc__ = """The maximum over windows of ``pool_size`` (``relax.nn.max_pool2d``);
padding never wins (it is -inf). ``ceil_mode`` rounds the output size up."""
avg_pool2d = _make_pool("avg")
avg_pool2d.__doc__ = """The mean over windows of ``pool_size`` (``relax.nn.avg_pool2d``); the
padding counts in the divisor only with ``count_include_pad``."""


def _infer_adaptive(call, ctx):
    name = "relax.nn.adaptive_avg_pool2d"
    data, dims = _data(call, name)
    if dims is None:
        return TensorStructInfo(None, data.dtype, 4)
    n, c, h, w = dims
    size = attr(call, "output_size")
    oh, ow = (h, w) if size is None else (as_dim(size[0]), as_dim(size[1]))
    return TensorStructInfo(in_layout([n, c, oh, ow], "NCHW", attr(call, "out_layout")),
                            data.dtype)


register_op("relax.nn.adaptive_avg_pool2d", _infer_adaptive,
            description="2-D average pooling to a given output size",
            attrs={"output_size": None, "layout": "NCHW", "out_layout": "NCHW"})


def adaptive_avg_pool2d(data, output_size=None, layout="NCHW", out_layout=None):
    """The mean over the windows that divide the input into ``output_size`` (an int or a
    pair; None: the input size) cells, as torch's AdaptiveAvgPool2d
    (``relax.nn.adaptive_avg_pool2d``)."""
    name = "relax.nn.adaptive_avg_pool2d"
    if output_size is not None:
        output_size = int_tuple_attr(output_size, name, "output_size", (1, 2),
                                     lambda v: v * 2 if len(v) == 1 else v)
        if any(v <= 0 for v in output_size):
            raise ValueError(f"{name}: 'output_size' must be positive, got {list(output_size)}")
    layout = layout_attr(layout, name, "layout", "NCHW")
    return Call(Op.get(name), [data], attrs={
        "output_size": output_size, "layout": layout,
        "out_layout": layout_attr(out_layout or layout, name, "out_layout", "NCHW")})
