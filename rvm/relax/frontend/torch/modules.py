"""Converters of ``torch.nn`` layers met as ``call_module`` nodes by ``from_fx``.

``MODULE_CONVERTERS`` maps a layer's class name to ``fn(importer, node, module)``;
the layer's parameters enter through ``importer.tensor`` (constants, or
parameters of ``main``).
"""
from rvm.relax.op import binary, index, manipulate, statistical, unary
from rvm.relax.op.nn import activation, pooling
from rvm.relax.frontend.torch.converters import linear, rank, tensor_sinfo
from rvm.relax.frontend.torch.converters_nn import (
    attention, batch_norm, conv2d, group_norm, layer_norm, pool2d,
)
from rvm.relax.frontend.torch.converters_shape import flatten

MODULE_CONVERTERS = {}


def module_converter(*names):
    """Decorator: registers ``fn(importer, node, module)`` for the layer classes ``names``."""

    def register(fn):
        for name in names:
            MODULE_CONVERTERS[name] = fn
        return fn

    return register


def param(imp, module, node, attr, prefix=None):
    """The tensor ``module.<attr>`` (a parameter or buffer) as a Relax value, or None;
    named ``<node target>[.<prefix>].<attr>``."""
    value = getattr(module, attr, None)
    if value is None:
        return None
    path = [node.target] + ([prefix] if prefix else []) + [attr]
    return imp.tensor(value, ".".join(path))


def _input(imp, node):
    return imp.value(node.args[0] if node.args else node.kwargs["input"])


@module_converter("Linear")
def _linear(imp, node, module):
    return linear(imp, _input(imp, node), param(imp, module, node, "weight"),
                  param(imp, module, node, "bias"))


def _activation(relax_fn):
    def convert(imp, node, module):
        return imp.emit(relax_fn(_input(imp, node)))

    return convert


for _name, _fn in [("ReLU", activation.relu), ("SiLU", activation.silu),
                   ("Sigmoid", unary.sigmoid), ("Tanh", unary.tanh)]:
    module_converter(_name)(_activation(_fn))


@module_converter("GELU")
def _gelu(imp, node, module):
    fn = activation.gelu_tanh if module.approximate == "tanh" else activation.gelu
    return imp.emit(fn(_input(imp, node)))


@module_converter("Softmax", "LogSoftmax")
def _softmax(imp, node, module):
    if module.dim is None:
        raise ValueError(f"{type(module).__name__} needs 'dim'")
    fn = activation.log_softmax if type(module).__name__ == "LogSoftmax" else activation.softmax
    return imp.emit(fn(_input(imp, node), axis=module.dim))


@module_converter("Dropout", "Identity")
def _identity(imp, node, module):
    return _input(imp, node)  # inference: dropout keeps every value


@module_converter("Flatten")
def _flatten(imp, node, module):
    return flatten(imp, _input(imp, node), module.start_dim, module.end_dim)


@module_converter("Conv2d")
def _conv2d(imp, node, module):
    if module.padding_mode != "zeros":
        raise ValueError(f"Conv2d with padding_mode={module.padding_mode!r} is not supported; "
                         "expected 'zeros'")
    return conv2d(imp, _input(imp, node), param(imp, module, node, "weight"),
                  param(imp, module, node, "bias"), module.stride, module.padding,
                  module.dilation, module.groups)


@module_converter("BatchNorm2d", "BatchNorm1d")
def _batch_norm(imp, node, module):
    return batch_norm(imp, _input(imp, node), param(imp, module, node, "weight"),
                      param(imp, module, node, "bias"), param(imp, module, node, "running_mean"),
                      param(imp, module, node, "running_var"), module.training, module.eps)


@module_converter("LayerNorm")
def _layer_norm(imp, node, module):
    return layer_norm(imp, _input(imp, node), module.normalized_shape,
                      param(imp, module, node, "weight"), param(imp, module, node, "bias"),
                      module.eps)


@module_converter("GroupNorm")
def _group_norm(imp, node, module):
    return group_norm(imp, _input(imp, node), module.num_groups,
                      param(imp, module, node, "weight"), param(imp, module, node, "bias"),
                      module.eps)


@module_converter("Embedding")
def _embedding(imp, node, module):
    return imp.emit(index.take(param(imp, module, node, "weight"), _input(imp, node), axis=0))


@module_converter("MaxPool2d")
def _max_pool2d(imp, node, module):
    if module.return_indices:
        raise ValueError("MaxPool2d with return_indices=True is not supported")
    return pool2d(imp, "max", _input(imp, node), module.kernel_size, module.stride,
                  module.padding, module.dilation, module.ceil_mode)


@module_converter("AvgPool2d")
def _avg_pool2d(imp, node, module):
    if module.divisor_override is not None:
        raise ValueError("AvgPool2d with divisor_override is not supported")
    return pool2d(imp, "avg", _input(imp, node), module.kernel_size, module.stride,
                  module.padding, 1, module.ceil_mode, module.count_include_pad)


@module_converter("AdaptiveAvgPool2d")
def _adaptive_avg_pool2d(imp, node, module):
    x = _input(imp, node)
    size = module.output_size
    size = (size, size) if isinstance(size, int) else tuple(size)
    size = [s if s is not None else int(d)
            for s, d in zip(size, tensor_sinfo(x).shape_values[2:])]
    return imp.emit(pooling.adaptive_avg_pool2d(x, size))


@module_converter("MultiheadAttention")
def _multihead_attention(imp, node, module):
    """nn.MultiheadAttention: the input projections, scaled dot-product attention per head,
    the output projection; and the attention weights (averaged over the heads unless
    ``average_attn_weights=False``) when ``need_weights``."""
    names = ("query", "key", "value", "key_padding_mask", "need_weights", "attn_mask",
             "average_attn_weights", "is_causal")
    opts = dict(zip(names, [imp.value(a) for a in node.args]))
    opts.update({k: imp.value(v) for k, v in node.kwargs.items()})
    if module.bias_k is not None or module.add_zero_attn:
        raise ValueError("MultiheadAttention with add_bias_kv or add_zero_attn is not supported")
    inputs = [opts["query"], opts["key"], opts["value"]]
    if rank(inputs[0]) != 3:
        raise ValueError(f"MultiheadAttention expects batched (3-D) inputs, got rank "
                         f"{rank(inputs[0])}")
    if not module.batch_first:  # (length, batch, embed) -> (batch, length, embed)
        inputs = [imp.emit(manipulate.permute_dims(t, [1, 0, 2])) for t in inputs]
    heads = [_heads(imp, t, module.num_heads) for t in _projections(imp, node, module, inputs)]
    mask = _attention_mask(imp, opts.get("attn_mask"), opts.get("key_padding_mask"))
    out, weights = attention(imp, *heads, mask, bool(opts.get("is_causal")),
                             need_weights=True)
    out = imp.emit(manipulate.permute_dims(out, [0, 2, 1, 3]))
    batch, length = tensor_sinfo(inputs[0]).shape_values[:2]
    out = imp.emit(manipulate.reshape(out, [batch, length, module.embed_dim]))
    out = linear(imp, out, param(imp, module.out_proj, node, "weight", "out_proj"),
                 param(imp, module.out_proj, node, "bias", "out_proj"))
    if not module.batch_first:
        out = imp.emit(manipulate.permute_dims(out, [1, 0, 2]))
    if not opts.get("need_weights", True):
        return (out, None)
    if opts.get("average_attn_weights", True):
        weights = imp.emit(statistical.mean(weights, axis=[1]))
    return (out, weights)


def _projections(imp, node, module, inputs):
    """q, k, v: each input through its slice of the packed in-projection (or its own)."""
    if module._qkv_same_embed_dim:
        weight = param(imp, module, node, "in_proj_weight")
        weights = [imp.emit(index.strided_slice(weight, [0], [k * module.embed_dim],
                                                [(k + 1) * module.embed_dim]))
                   for k in range(3)]
    else:
        weights = [param(imp, module, node, f"{c}_proj_weight") for c in "qkv"]
    bias = param(imp, module, node, "in_proj_bias")
    outs = []
    for k, (x, w) in enumerate(zip(inputs, weights)):
        b = None if bias is None else imp.emit(index.strided_slice(
            bias, [0], [k * module.embed_dim], [(k + 1) * module.embed_dim]))
        outs.append(linear(imp, x, w, b))
    return outs


def _heads(imp, x, heads):
    """(batch, length, embed) -> (batch, heads, length, embed // heads)."""
    batch, length, embed = tensor_sinfo(x).shape_values
    x = imp.emit(manipulate.reshape(x, [batch, length, heads, int(embed) // heads]))
    return imp.emit(manipulate.permute_dims(x, [0, 2, 1, 3]))


def _attention_mask(imp, attn_mask, key_padding_mask):
    """The additive mask of MultiheadAttention (its boolean masks are True where masked)."""
    bias = None
    for mask, expand in ((attn_mask, None), (key_padding_mask, [1, 2])):
        if mask is None:
            continue
        if tensor_sinfo(mask).dtype == "bool":
            mask = imp.emit(unary.logical_not(mask))  # True where attention is allowed
        if expand is not None:
            mask = imp.emit(manipulate.expand_dims(mask, expand))
        if bias is None:
            bias = mask
        elif tensor_sinfo(mask).dtype == "bool" and tensor_sinfo(bias).dtype == "bool":
            bias = imp.emit(binary.logical_and(bias, mask))
        else:
            raise ValueError("MultiheadAttention with both masks needs them of one kind "
                             "(both boolean)")
    return bias
