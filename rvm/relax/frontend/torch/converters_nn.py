"""Converters of PyTorch's neural-network operators: convolution, pooling, normalizations,
embedding and attention.

Models are imported for inference: batch normalization uses the running statistics and
a graph recorded in training mode is refused (``model.eval()`` first).
"""
import math

import numpy as np

from rvm.relax.expr import TupleGetItem, const
from rvm.relax.op import binary, create, index, linear_algebra, manipulate
from rvm.relax.op.search import where
from rvm.relax.op.nn import activation, convolution, normalization, pooling
from rvm.relax.frontend.torch.converters import REQUIRED, args, converter, rank, tensor_sinfo
from rvm.relax.frontend.torch.converters_create import triangle


def pair(value, what):
    """An int or a pair of ints as a pair."""
    if isinstance(value, int):
        return (value, value)
    value = tuple(value)
    if len(value) == 1:
        return (value[0], value[0])
    if len(value) != 2:
        raise ValueError(f"{what} must be an int or a pair of ints, got {value}")
    return value


def _conv_padding(padding, kernel, dilation):
    if padding == "valid":
        return (0, 0)
    if padding == "same":
        total = [d * (k - 1) for k, d in zip(kernel, dilation)]
        if any(t % 2 for t in total):
            raise ValueError("padding='same' with an even kernel extent is not supported")
        return tuple(t // 2 for t in total)
    return pair(padding, "padding")


def conv2d(imp, x, weight, bias, stride, padding, dilation, groups):
    """Emits a 2-D convolution (NCHW, OIHW) plus its bias."""
    kernel = [int(getattr(d, "value", d)) for d in tensor_sinfo(weight).shape_values[2:]]
    dilation = pair(dilation, "dilation")
    out = imp.emit(convolution.conv2d(x, weight, strides=pair(stride, "stride"),
                                      padding=_conv_padding(padding, kernel, dilation),
                                      dilation=dilation, groups=groups))
    if bias is None:
        return out
    return imp.emit(binary.add(out, imp.emit(manipulate.reshape(bias, [1, -1, 1, 1]))))


@converter("conv2d")
def _conv2d(imp, node):
    x, w, b, stride, padding, dilation, groups = args(
        imp, node, ("input", REQUIRED), ("weight", REQUIRED), ("bias", None), ("stride", 1),
        ("padding", 0), ("dilation", 1), ("groups", 1))
    return conv2d(imp, x, w, b, stride, padding, dilation, groups)


def batch_norm(imp, x, weight, bias, mean, var, training, eps):
    """Emits inference batch normalization over axis 1 (running statistics)."""
    if training and mean is not None:
        raise ValueError("the graph was recorded in training mode; call model.eval() before "
                         "tracing or exporting")
    channels = tensor_sinfo(x).shape_values[1]
    ones = const(np.ones(int(channels), tensor_sinfo(x).dtype.numpy_dtype))
    zeros = const(np.zeros(int(channels), tensor_sinfo(x).dtype.numpy_dtype))
    out = imp.emit(normalization.batch_norm(
        x, ones if weight is None else weight, zeros if bias is None else bias,
        zeros if mean is None else mean, ones if var is None else var, axis=1, epsilon=eps,
        training=mean is None))
    return imp.emit(TupleGetItem(out, 0))


@converter("batch_norm", "_native_batch_norm_legit_no_training")
def _batch_norm(imp, node):
    name = getattr(node.target, "__name__", "")
    if name.startswith("_native_batch_norm_legit_no_training"):
        x, w, b, mean, var, _, eps = args(imp, node, ("input", REQUIRED), ("weight", None),
                                          ("bias", None), ("running_mean", None),
                                          ("running_var", None), ("momentum", 0.1),
                                          ("eps", 1e-5))
        return (batch_norm(imp, x, w, b, mean, var, False, eps), None, None)
    x, w, b, mean, var, training, _, eps = args(
        imp, node, ("input", REQUIRED), ("weight", None), ("bias", None),
        ("running_mean", None), ("running_var", None), ("training", False),
        ("momentum", 0.1), ("eps", 1e-5), ("cudnn_enabled", True))[:8]
    return batch_norm(imp, x, w, b, mean, var, training, eps)


@converter("functional_batch_norm")
def _functional_batch_norm(imp, node):
    x, mean, var, w, b, training, _, eps = args(
        imp, node, ("input", REQUIRED), ("running_mean", None), ("running_var", None),
        ("weight", None), ("bias", None), ("training", False), ("momentum", 0.1),
        ("eps", 1e-5))
    return batch_norm(imp, x, w, b, mean, var, training, eps)


def layer_norm(imp, x, shape, weight, bias, eps):
    """Emits layer normalization over the trailing axes of ``shape``."""
    shape = [shape] if isinstance(shape, int) else list(shape)
    ndim = rank(x)
    dtype = tensor_sinfo(x).dtype.numpy_dtype
    ones = const(np.ones([int(s) for s in shape], dtype))
    zeros = const(np.zeros([int(s) for s in shape], dtype))
    return imp.emit(normalization.layer_norm(
        x, ones if weight is None else weight, zeros if bias is None else bias,
        axes=list(range(ndim - len(shape), ndim)), epsilon=eps))


@converter("layer_norm")
def _layer_norm(imp, node):
    x, shape, w, b, eps, _ = args(imp, node, ("input", REQUIRED),
                                  ("normalized_shape", REQUIRED), ("weight", None),
                                  ("bias", None), ("eps", 1e-5), ("cudnn_enable", True))
    return layer_norm(imp, x, shape, w, b, eps)


def group_norm(imp, x, groups, weight, bias, eps):
    """Emits group normalization of the channels (axis 1) in ``groups`` groups."""
    channels = int(tensor_sinfo(x).shape_values[1])
    dtype = tensor_sinfo(x).dtype.numpy_dtype
    weight = const(np.ones(channels, dtype)) if weight is None else weight
    bias = const(np.zeros(channels, dtype)) if bias is None else bias
    return imp.emit(normalization.group_norm(x, weight, bias, num_groups=groups, channel_axis=1,
                                             axes=list(range(2, rank(x))), epsilon=eps))


@converter("group_norm")
def _group_norm(imp, node):
    x, groups, w, b, eps, _ = args(imp, node, ("input", REQUIRED), ("num_groups", REQUIRED),
                                   ("weight", None), ("bias", None), ("eps", 1e-5),
                                   ("cudnn_enabled", True))
    return group_norm(imp, x, groups, w, b, eps)


def batched(x, what):
    """ValueError unless ``x`` is a rank-4 (N, C, H, W) tensor."""
    if rank(x) != 4:
        raise ValueError(f"{what} expects a rank-4 (N, C, H, W) tensor, got rank {rank(x)}; an "
                         "unbatched (C, H, W) input needs x[None] first")


def pool2d(imp, kind, x, kernel, stride, padding, dilation=1, ceil_mode=False,
           count_include_pad=True):
    """Emits max or average pooling (``kind``); the stride defaults to the kernel."""
    batched(x, f"{kind}_pool2d")
    kernel = pair(kernel, "kernel_size")
    stride = kernel if stride is None or stride == [] else pair(stride, "stride")
    build = pooling.max_pool2d if kind == "max" else pooling.avg_pool2d
    extra = {} if kind == "max" else {"count_include_pad": bool(count_include_pad)}
    return imp.emit(build(x, pool_size=kernel, strides=stride, padding=pair(padding, "padding"),
                          dilation=pair(dilation, "dilation"), ceil_mode=bool(ceil_mode),
                          **extra))


@converter("max_pool2d")
def _max_pool2d(imp, node):
    x, kernel, stride, padding, dilation, ceil_mode, indices = args(
        imp, node, ("input", REQUIRED), ("kernel_size", REQUIRED), ("stride", None),
        ("padding", 0), ("dilation", 1), ("ceil_mode", False), ("return_indices", False))
    if indices:
        raise ValueError("max_pool2d with return_indices=True is not supported; expected "
                         "return_indices=False")
    return pool2d(imp, "max", x, kernel, stride, padding, dilation, ceil_mode)


@converter("avg_pool2d")
def _avg_pool2d(imp, node):
    x, kernel, stride, padding, ceil_mode, include, divisor = args(
        imp, node, ("input", REQUIRED), ("kernel_size", REQUIRED), ("stride", None),
        ("padding", 0), ("ceil_mode", False), ("count_include_pad", True),
        ("divisor_override", None))
    if divisor is not None:
        raise ValueError("avg_pool2d with divisor_override is not supported")
    return pool2d(imp, "avg", x, kernel, stride, padding, 1, ceil_mode, include)


@converter("adaptive_avg_pool2d", "_adaptive_avg_pool2d")
def _adaptive_avg_pool2d(imp, node):
    x, size = args(imp, node, ("input", REQUIRED), ("output_size", REQUIRED))
    batched(x, "adaptive_avg_pool2d")
    size = [s if s is not None else int(d) for s, d in
            zip(pair(size, "output_size"), tensor_sinfo(x).shape_values[2:])]
    return imp.emit(pooling.adaptive_avg_pool2d(x, size))


@converter("embedding")
def _embedding(imp, node):
    # padding_idx, scale_grad_by_freq and sparse only shape the gradient
    weight, indices, _, _, _ = args(imp, node, ("weight", REQUIRED), ("indices", REQUIRED),
                                    ("padding_idx", -1), ("scale_grad_by_freq", False),
                                    ("sparse", False))
    return imp.emit(index.take(weight, indices, axis=0))


@converter("functional_embedding")
def _functional_embedding(imp, node):
    indices, weight, _, max_norm, _, _, _ = args(
        imp, node, ("input", REQUIRED), ("weight", REQUIRED), ("padding_idx", None),
        ("max_norm", None), ("norm_type", 2.0), ("scale_grad_by_freq", False),
        ("sparse", False))
    if max_norm is not None:
        raise ValueError(f"embedding with max_norm={max_norm} (renormalizing the rows it "
                         "reads) is not supported; expected max_norm=None")
    return imp.emit(index.take(weight, indices, axis=0))


def attention(imp, q, k, v, mask=None, causal=False, scale=None, need_weights=False):
    """``softmax(q k^T * scale + mask) v`` over (..., length, head size) operands; with
    ``need_weights``, also the attention weights. A boolean ``mask`` is True where
    attention is allowed (torch's scaled_dot_product_attention convention)."""
    ndim = rank(q)
    head = int(tensor_sinfo(q).shape_values[-1])
    scale = 1 / math.sqrt(head) if scale is None else scale
    axes = list(range(ndim - 2)) + [ndim - 1, ndim - 2]
    scores = imp.emit(linear_algebra.matmul(q, imp.emit(manipulate.permute_dims(k, axes))))
    scores = imp.emit(binary.multiply(scores, float(scale)))
    bias = _mask_bias(imp, mask, scores, causal)
    if bias is not None:
        scores = imp.emit(binary.add(scores, bias))
    weights = imp.emit(activation.softmax(scores, axis=-1))
    out = imp.emit(linear_algebra.matmul(weights, v))
    return (out, weights) if need_weights else out


def _mask_bias(imp, mask, scores, causal):
    dtype = tensor_sinfo(scores).dtype
    bias = None
    if mask is not None:
        if tensor_sinfo(mask).dtype == "bool":
            mask = imp.emit(where(mask, const(0.0, dtype), const(-math.inf, dtype)))
        bias = mask
    if causal:  # torch's is_causal: query i sees keys 0..i (top-left aligned)
        rows, cols = tensor_sinfo(scores).shape_values[-2:]
        hidden = imp.emit(create.full([rows, cols], const(-math.inf, dtype), dtype=str(dtype)))
        causal_bias = triangle(imp, hidden, 1, upper=True)  # -inf above the diagonal, else 0
        bias = causal_bias if bias is None else imp.emit(binary.add(bias, causal_bias))
    return bias


@converter("scaled_dot_product_attention")
def _sdpa(imp, node):
    q, k, v, mask, dropout, causal, scale, gqa = args(
        imp, node, ("query", REQUIRED), ("key", REQUIRED), ("value", REQUIRED),
        ("attn_mask", None), ("dropout_p", 0.0), ("is_causal", False), ("scale", None),
        ("enable_gqa", False))
    if gqa:
        raise ValueError("scaled_dot_product_attention with enable_gqa is not supported")
    if dropout:
        raise ValueError(f"scaled_dot_product_attention with dropout_p={dropout} drops "
                         "random weights; expected dropout_p=0 (inference)")
    return attention(imp, q, k, v, mask, bool(causal), scale)
