"""Scaled dot-product attention over BSNH tensors in one kernel: scores, a stable softmax
over the keys, and the weighted sum of the values, without materialized transposes.
"""
import math

from rvm.tir import op as _op
from rvm.te import operation as _te
from rvm.te.operation import compute, reduce_axis
from rvm.topi.broadcast import broadcast_index
from rvm.topi.utils import const_value, named


def attention(query, key, value, bias=None, scale=None, causal_mask=None, window_size=None):
    """``softmax(Q K^T * scale + bias) V`` for query (B, S, N, H), key (B, S_kv, N, H) and
    value (B, S_kv, N, H_v), giving (B, S, N, H_v); ``scale`` defaults to ``1 / sqrt(H)``;
    ``bias`` broadcasts to (B, N, S, S_kv). ``causal_mask`` "TopLeft" keeps key j for query i
    when j <= i, "BottomRight" when j <= i + S_kv - S; ``window_size`` also drops keys
    ``window_size`` or more behind. Masked scores get the dtype's lowest value (a fully masked
    row averages all values, as TVM's).

    >>> from rvm.te.operation import placeholder
    >>> q = placeholder((2, 5, 4, 8), name="q")
    >>> [d.value for d in attention(q, q, placeholder((2, 5, 4, 3), name="v")).shape]
    [2, 5, 4, 3]
    """
    b, s, n, h = query.shape
    s_kv, h_v = key.shape[1], value.shape[3]
    dtype = query.dtype
    if scale is not None:
        scale = _op.const(scale, dtype)
    elif const_value(h) is not None:
        scale = _op.const(1 / math.sqrt(const_value(h)), dtype)
    else:
        scale = _op.rsqrt(_op.cast(h, dtype))
    k = reduce_axis((_op.const(0, h.dtype), h), name="k")
    offset = s_kv - s if causal_mask == "BottomRight" else _op.const(0, s.dtype)
    score_shape = [b, n, s, s_kv]

    def keep(i, j):
        conds = []
        if causal_mask is not None:
            conds.append(j <= i + offset)
        if window_size is not None:
            conds.append(i + offset - j < window_size)
        return _op.all(*conds)

    def fscore(bb, nn, i, j):
        return _te.sum(_op.cast(query[bb, i, nn, k.var], dtype) *
                       _op.cast(key[bb, j, nn, k.var], dtype), axis=k)

    dots = compute(score_shape, named(fscore, ["b", "h", "i", "j"]), name="T_attention_dot")

    def fmasked(bb, nn, i, j):
        score = dots[bb, nn, i, j] * scale
        if bias is not None:
            score = score + _op.cast(broadcast_index(bias, score_shape, (bb, nn, i, j)), dtype)
        if causal_mask is None and window_size is None:
            return score
        return _op.if_then_else(keep(i, j), score, _op.min_value(dtype))

    scores = compute(score_shape, named(fmasked, ["b", "h", "i", "j"]),
                     name="T_attention_score")
    r1 = reduce_axis((_op.const(0, s_kv.dtype), s_kv), name="j")
    top = compute([b, n, s], named(lambda bb, nn, i: _te.max(scores[bb, nn, i, r1.var], axis=r1),
                                   ["b", "h", "i"]), name="T_attention_max")
    exp = compute(score_shape, named(lambda bb, nn, i, j: _op.exp(scores[bb, nn, i, j] -
                                                                   top[bb, nn, i]),
                                     ["b", "h", "i", "j"]), name="T_attention_exp")
    r2 = reduce_axis((_op.const(0, s_kv.dtype), s_kv), name="j")
    total = compute([b, n, s], named(lambda bb, nn, i: _te.sum(exp[bb, nn, i, r2.var], axis=r2),
                                     ["b", "h", "i"]), name="T_attention_sum")
    r3 = reduce_axis((_op.const(0, s_kv.dtype), s_kv), name="j")
    weighted = compute([b, s, n, h_v], named(
        lambda bb, i, nn, d: _te.sum(exp[bb, nn, i, r3.var] * _op.cast(value[bb, r3.var, nn, d],
                                                                       dtype), axis=r3),
        ["b", "i", "h", "d"]), name="T_attention_weighted")
    return compute([b, s, n, h_v], named(
        lambda bb, i, nn, d: weighted[bb, i, nn, d] / total[bb, nn, i], ["b", "i", "h", "d"]),
        name="T_attention")
