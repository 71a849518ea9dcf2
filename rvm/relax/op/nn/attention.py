"""Scaled dot-product attention over BSNH tensors (``R.nn.attention``), as TVM defines it:
``softmax(Q @ K^T * scale + bias, masked) @ V`` per batch and head.

>>> from rvm.relax.expr import Var
>>> from rvm.relax.struct_info import TensorStructInfo
>>> q = Var("q", TensorStructInfo((2, 5, 4, 8), "float32"))
>>> attention(q, q, q, causal_mask="TopLeft").attrs
{'scale': None, 'causal_mask': 'TopLeft', 'window_size': None}
"""
from rvm.relax.expr import Call
from rvm.relax.op.attrs import float_attr, int_attr, str_attr
from rvm.relax.op.infer_util import (
    attr,
    broadcast_shapes,
    check_arity,
    check_dim_match,
    check_float,
    check_rank,
    dims_text,
    tensor_arg,
    unify_dtype,
)
from rvm.relax.op.registry import Op, register_op
from rvm.relax.struct_info import TensorStructInfo

CAUSAL_MASKS = ("TopLeft", "BottomRight")


def _infer_attention(call, ctx):
    name = "relax.nn.attention"
    check_arity(call, range(3, 5), name)
    q, k, v = (tensor_arg(call, i, name, n) for i, n in enumerate(("query", "key", "value")))
    for sinfo, arg in ((q, "query"), (k, "key"), (v, "value")):
        check_rank(sinfo, 4, name, arg)
        unify_dtype(q.dtype, sinfo.dtype, name)
    check_float(q, name, "query")
    window = attr(call, "window_size")
    if window is not None and window <= 0:
        raise ValueError(f"{name}: 'window_size' must be positive, got {window}")
    qv, kv, vv = q.shape_values, k.shape_values, v.shape_values
    if qv is None or kv is None or vv is None:
        return TensorStructInfo(None, q.dtype, 4)
    (b, s, n, h), (_, s_kv, _, _), (_, _, _, h_v) = qv, kv, vv
    for what, got, want in (("key batch", kv[0], b), ("value batch", vv[0], b),
                            ("key heads", kv[2], n), ("value heads", vv[2], n),
                            ("key head size", kv[3], h), ("value length", vv[1], s_kv)):
        check_dim_match(want, got, name, f"{what} (query {dims_text(qv)}, key "
                                         f"{dims_text(kv)}, value {dims_text(vv)})")
    if len(call.args) == 4:
        bias = tensor_arg(call, 3, name, "bias")
        unify_dtype(q.dtype, bias.dtype, name)
        if bias.ndim > 4:
            raise ValueError(f"{name}: argument 'bias' must have rank <= 4, got {bias.ndim}")
        if bias.shape_values is not None:
            try:
                broadcast_shapes([b, n, s, s_kv], bias.shape_values, name)
            except ValueError:
                raise ValueError(f"{name}: argument 'bias' of shape "
                                 f"{dims_text(bias.shape_values)} does not broadcast to "
                                 f"(batch, heads, length, key length) = "
                                 f"{dims_text([b, n, s, s_kv])}") from None
    return TensorStructInfo([b, s, n, h_v], q.dtype)


register_op("relax.nn.attention", _infer_attention,
            description="scaled dot-product attention over BSNH tensors",
            attrs={"scale": None, "causal_mask": None, "window_size": None})


def attention(query, key, value, bias=None, scale=None, causal_mask=None, window_size=None):
    """Attention of ``query`` (batch, length, heads, head size) over ``key``/``value``
    (batch, key length, heads, ...): ``softmax(Q K^T * scale + bias) V`` with ``scale``
    default ``1 / sqrt(head size)``; ``bias`` broadcasts to (batch, heads, length, key
    length); ``causal_mask`` "TopLeft" keeps key j <= query i, "BottomRight" j <= i + key
    length - length; ``window_size`` also drops keys more than that far behind
    (``relax.nn.attention``)."""
    name = "relax.nn.attention"
    args = [query, key, value] + ([] if bias is None else [bias])
    return Call(Op.get(name), args, attrs={
        "scale": None if scale is None else float_attr(scale, name, "scale"),
        "causal_mask": str_attr(causal_mask, name, "causal_mask", CAUSAL_MASKS, optional=True),
        "window_size": None if window_size is None else int_attr(window_size, name,
                                                                   "window_size")})
