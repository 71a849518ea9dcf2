"""The operators of ``rvm.relax.frontend.nn`` (TVM's ``nn.op``): each takes ``nn.Tensor``s,
emits one Relax binding named ``name`` into the function being exported, and returns the
result as an ``nn.Tensor`` (a tuple of them for tuple results).

They run inside ``Module.export_tvm`` (or any active BlockBuilder function
scope); called elsewhere they raise a RuntimeError saying so.
"""
import builtins

from rvm.relax import op as _op
from rvm.relax.block_builder import BlockBuilder
from rvm.relax.frontend.nn.core import Tensor, wrap_nested


def _expr(value, who, what):
    if not isinstance(value, Tensor):
        raise TypeError(f"nn.op.{who}: {what} must be an nn.Tensor, got "
                        f"{type(value).__name__}")
    return value._expr


def _binary(relax_op, who):
    def apply(a, b, name=who):
        return wrap_nested(relax_op(_expr(a, who, "a"), _expr(b, who, "b")), name)

    apply.__name__ = who
    apply.__doc__ = f"Element-wise {who} with numpy-style broadcasting."
    return apply


def _unary(relax_op, who):
    def apply(x, name=who):
        return wrap_nested(relax_op(_expr(x, who, "x")), name)

    apply.__name__ = who
    apply.__doc__ = f"Element-wise {who}."
    return apply


add = _binary(_op.add, "add")
subtract = _binary(_op.subtract, "subtract")
divide = _binary(_op.divide, "divide")
maximum = _binary(_op.maximum, "maximum")
minimum = _binary(_op.minimum, "minimum")
less = _binary(_op.less, "less")
less_equal = _binary(_op.less_equal, "less_equal")
greater = _binary(_op.greater, "greater")
greater_equal = _binary(_op.greater_equal, "greater_equal")
equal = _binary(_op.equal, "equal")
negative = _unary(_op.negative, "negative")
square = _unary(_op.square, "square")
sqrt = _unary(_op.sqrt, "sqrt")
exp = _unary(_op.exp, "exp")
sigmoid = _unary(_op.sigmoid, "sigmoid")
tanh = _unary(_op.tanh, "tanh")
relu = _unary(_op.nn.relu, "relu")
silu = _unary(_op.nn.silu, "silu")


def multiply(a, b, name="mul"):
    """Element-wise product with numpy-style broadcasting."""
    return wrap_nested(_op.multiply(_expr(a, "multiply", "a"), _expr(b, "multiply", "b")), name)


def matmul(a, b, out_dtype=None, name="matmul"):
    """Matrix product, broadcasting batch dimensions; ``out_dtype`` defaults to the inputs'."""
    return wrap_nested(_op.matmul(_expr(a, "matmul", "a"), _expr(b, "matmul", "b"),
                                  out_dtype=out_dtype), name)


def gelu(x, approximate=None, name="gelu"):
    """GELU; ``approximate="tanh"`` uses the tanh approximation."""
    if approximate not in (None, "none", "tanh"):
        raise ValueError(f"nn.op.gelu: approximate must be None or 'tanh', got {approximate!r}")
    relax_op = _op.nn.gelu_tanh if approximate == "tanh" else _op.nn.gelu
    return wrap_nested(relax_op(_expr(x, "gelu", "x")), name)


def softmax(x, axis=-1, name="softmax"):
    """Softmax along ``axis``."""
    return wrap_nested(_op.nn.softmax(_expr(x, "softmax", "x"), axis), name)


def rms_norm(x, weight, axes, epsilon=1e-5, name="rms_norm"):
    """``x / sqrt(mean(x * x over axes) + epsilon) * weight``."""
    return wrap_nested(_op.nn.rms_norm(_expr(x, "rms_norm", "x"),
                                       _expr(weight, "rms_norm", "weight"), axes, epsilon), name)


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5, name="layer_norm"):
    """Layer normalization over the trailing ``normalized_shape`` dimensions; a missing
    ``weight`` is ones and a missing ``bias`` zeros."""
    data = _expr(x, "layer_norm", "x")
    if isinstance(normalized_shape, int):
        normalized_shape = [normalized_shape]
    axes = list(range(-len(normalized_shape), 0))
    dtype = x.dtype
    gamma = _op.ones(normalized_shape, dtype) if weight is None else \
        _expr(weight, "layer_norm", "weight")
    beta = _op.zeros(normalized_shape, dtype) if bias is None else \
        _expr(bias, "layer_norm", "bias")
    return wrap_nested(_op.nn.layer_norm(data, gamma, beta, axes, eps), name)


def group_norm(x, num_groups, weight=None, bias=None, eps=1e-5, channel_axis=1, axes=None,
               name="group_norm"):
    """Normalization within ``num_groups`` groups of the channels on ``channel_axis``, the
    statistics also over ``axes`` (default: every axis after the channels); a missing
    ``weight`` is ones and a missing ``bias`` zeros."""
    data = _expr(x, "group_norm", "x")
    channel_axis = channel_axis % x.ndim
    if axes is None:
        axes = list(range(channel_axis + 1, x.ndim))
    channels = [x.shape[channel_axis]]
    gamma = _op.ones(channels, x.dtype) if weight is None else \
        _expr(weight, "group_norm", "weight")
    beta = _op.zeros(channels, x.dtype) if bias is None else _expr(bias, "group_norm", "bias")
    return wrap_nested(_op.nn.group_norm(data, gamma, beta, num_groups, channel_axis, axes,
                                         eps), name)


def permute_dims(x, axes=None, name=None):
    """``x`` with its axes permuted (reversed when ``axes`` is None)."""
    return wrap_nested(_op.permute_dims(_expr(x, "permute_dims", "x"), axes),
                       name or "permute_dims")


def reshape(x, shape, name="reshape"):
    """``x`` with shape ``shape`` (one dimension may be -1)."""
    return wrap_nested(_op.reshape(_expr(x, "reshape", "x"), list(shape)), name)


def take(x, indices, axis=None, name="take"):
    """The elements of ``x`` at ``indices`` along ``axis`` (of the flattened ``x`` when
    None)."""
    return wrap_nested(_op.take(_expr(x, "take", "x"), _expr(indices, "take", "indices"),
                                axis), name)


def astype(x, dtype, name="astype"):
    """``x`` converted to ``dtype``; no binding is emitted when it already has it."""
    if x.dtype == dtype:
        return x
    return wrap_nested(_op.astype(_expr(x, "astype", "x"), dtype), name)


def broadcast_to(x, shape, name="broadcast_to"):
    """``x`` broadcast to ``shape``."""
    return wrap_nested(_op.broadcast_to(_expr(x, "broadcast_to", "x"), list(shape)), name)


def concat(x, dim, name="concat"):
    """The tensors of the list ``x`` joined along ``dim``."""
    return wrap_nested(_op.concat([_expr(t, "concat", "x[i]") for t in x], dim), name)


def split(ary, indices_or_sections, axis=0, name="split"):
    """A tuple of pieces of ``ary`` along ``axis``: ``indices_or_sections`` equal parts or
    the pieces between the given indices."""
    return wrap_nested(_op.split(_expr(ary, "split", "ary"), indices_or_sections, axis), name)


def chunk(x, chunks, dim=0, name="chunk"):
    """``x`` split into ``chunks`` equal pieces along ``dim``."""
    return wrap_nested(_op.split(_expr(x, "chunk", "x"), chunks, dim), name)


def squeeze(x, axis=-1, name="squeeze"):
    """``x`` without the size-1 dimension ``axis``."""
    return wrap_nested(_op.squeeze(_expr(x, "squeeze", "x"), axis), name)


def unsqueeze(x, dim, name="unsqueeze"):
    """``x`` with a new size-1 dimension at ``dim``."""
    return wrap_nested(_op.expand_dims(_expr(x, "unsqueeze", "x"), dim), name)


def repeat(x, repeats, axis=None, name="repeat"):
    """``x`` with each element repeated ``repeats`` times along ``axis``."""
    return wrap_nested(_op.repeat(_expr(x, "repeat", "x"), repeats, axis), name)


def sum(x, axis=None, keepdims=False, name="sum"):  # noqa: A001  (TVM's name)
    """The sum over ``axis`` (all axes when None)."""
    return wrap_nested(_op.sum(_expr(x, "sum", "x"), axis, keepdims), name)


def max(x, axis=None, keepdims=False, name="max"):  # noqa: A001  (TVM's name)
    """The maximum over ``axis`` (all axes when None)."""
    return wrap_nested(_op.max(_expr(x, "max", "x"), axis, keepdims), name)


def min(x, axis=None, keepdims=False, name="min"):  # noqa: A001  (TVM's name)
    """The minimum over ``axis`` (all axes when None)."""
    return wrap_nested(_op.min(_expr(x, "min", "x"), axis, keepdims), name)


def zeros(shape, dtype="float32", name="zeros"):
    """A tensor of zeros."""
    return wrap_nested(_op.zeros(list(shape), dtype), name)


def ones(shape, dtype="float32", name="ones"):
    """A tensor of ones."""
    return wrap_nested(_op.ones(list(shape), dtype), name)


def full(shape, fill_value, dtype="float32", name="full"):
    """A tensor filled with ``fill_value`` (a number or a 0-d Tensor)."""
    if isinstance(fill_value, Tensor):
        fill = fill_value._expr
    else:
        fill = Tensor.from_scalar(fill_value, dtype)._expr
    return wrap_nested(_op.full(list(shape), fill, dtype), name)


def where(condition, x1, x2, name="where"):
    """Element-wise ``x1 if condition else x2``."""
    return wrap_nested(_op.where(_expr(condition, "where", "condition"),
                                 _expr(x1, "where", "x1"), _expr(x2, "where", "x2")), name)


def _pair(value, who, what):
    if isinstance(value, int):
        return (value, value)
    if isinstance(value, (list, tuple)) and builtins.all(isinstance(v, int) for v in value):
        return tuple(value)
    raise TypeError(f"nn.op.{who}: {what} must be an int or a tuple of ints, got {value!r}")


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1,
           data_layout="NCHW", name="conv2d"):
    """2-D convolution of ``x`` with ``weight`` (O, I/groups, kH, kW), plus ``bias`` (O,)."""
    out = _op.nn.conv2d(_expr(x, "conv2d", "x"), _expr(weight, "conv2d", "weight"),
                        strides=_pair(stride, "conv2d", "stride"),
                        padding=_pair(padding, "conv2d", "padding"),
                        dilation=_pair(dilation, "conv2d", "dilation"),
                        groups=groups, data_layout=data_layout)
    if bias is not None:
        layouts = {"NCHW": [1, -1, 1, 1], "NHWC": [1, 1, 1, -1]}
        if data_layout not in layouts:
            raise ValueError(f"nn.op.conv2d: a bias needs data_layout NCHW or NHWC, got "
                             f"{data_layout!r}")
        out = _op.add(out, _op.reshape(_expr(bias, "conv2d", "bias"), layouts[data_layout]))
    return wrap_nested(out, name)


def scaled_dot_product_attention(query, key, value, attn_mask=None, is_causal=False,
                                 scale=None, name="scaled_dot_product_attention"):
    """``softmax(Q K^T * scale + mask) V`` over (batch, length, heads, head size) inputs."""
    bias = None if attn_mask is None else _expr(attn_mask, "scaled_dot_product_attention",
                                                "attn_mask")
    out = _op.nn.attention(_expr(query, "scaled_dot_product_attention", "query"),
                           _expr(key, "scaled_dot_product_attention", "key"),
                           _expr(value, "scaled_dot_product_attention", "value"),
                           bias=bias, scale=scale,
                           causal_mask="TopLeft" if is_causal else None)
    return wrap_nested(out, name)


def tensor_expr_op(tensor_expr_func, name_hint, args, *, attrs=None):
    """The TE function ``tensor_expr_func`` applied to ``args`` (Tensors pass as their
    expressions), emitted as a call_tir of the PrimFunc made from it."""
    if attrs:
        raise NotImplementedError("nn.op.tensor_expr_op: attrs for the generated PrimFunc are "
                                  "not supported")
    builder = BlockBuilder.current()
    if builder is None:
        raise RuntimeError(f"nn.op '{name_hint}': no function is being built; nn operators "
                           "run inside Module.export_tvm")
    converted = [a._expr if isinstance(a, Tensor) else a for a in args]
    call = builder.call_te(tensor_expr_func, *converted, primfunc_name_hint=name_hint)
    return wrap_nested(call, name_hint)
