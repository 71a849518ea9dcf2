"""Legalization of the neural-network operators (``relax.nn.*``) to topi.nn kernels."""
from rvm.relax.expr import Tuple
from rvm.topi.creation import full_like
from rvm.topi.nn import elemwise as nn_elemwise
from rvm.topi.nn import norm
from rvm.topi.nn.attention import attention
from rvm.topi.nn.conv2d import conv2d, conv2d_transpose
from rvm.topi.nn.pooling import adaptive_pool, pool2d
from rvm.topi.nn.softmax import log_softmax, softmax
from rvm.relax.transform.legalize.registry import attr, kernel_name, register_legalize, te_rule

te_rule("relax.nn.relu", nn_elemwise.relu)
te_rule("relax.nn.gelu", nn_elemwise.gelu)
te_rule("relax.nn.gelu_tanh", nn_elemwise.gelu_tanh)
te_rule("relax.nn.silu", nn_elemwise.silu)


@register_legalize("relax.nn.softmax")
@register_legalize("relax.nn.log_softmax")
def _softmax(bb, call):
    fn = softmax if call.op.name == "relax.nn.softmax" else log_softmax
    return bb.call_te(fn, call.args[0], axis=attr(call, "axis", -1),
                      primfunc_name_hint=kernel_name(call))


@register_legalize("relax.nn.leakyrelu")
def _leakyrelu(bb, call):
    return bb.call_te(nn_elemwise.leaky_relu, call.args[0], attr(call, "alpha", 0.01),
                      primfunc_name_hint="leakyrelu")


@register_legalize("relax.nn.conv2d")
def _conv2d(bb, call):
    return bb.call_te(conv2d, call.args[0], call.args[1], attr(call, "strides"),
                      attr(call, "padding"), attr(call, "dilation"),
                      data_layout=attr(call, "data_layout"),
                      kernel_layout=attr(call, "kernel_layout"), out_dtype=_dtype(call),
                      groups=attr(call, "groups"), out_layout=attr(call, "out_layout"),
                      primfunc_name_hint="conv2d")


@register_legalize("relax.nn.conv2d_transpose")
def _conv2d_transpose(bb, call):
    return bb.call_te(conv2d_transpose, call.args[0], call.args[1],
                      attr(call, "strides"), attr(call, "padding"),
                      attr(call, "output_padding"), attr(call, "dilation"),
                      attr(call, "groups"), attr(call, "data_layout"),
                      attr(call, "kernel_layout"), attr(call, "out_layout"), _dtype(call),
                      primfunc_name_hint="conv2d_transpose")


def _dtype(call):
    dtype = attr(call, "out_dtype")
    return None if dtype is None else str(dtype)


@register_legalize("relax.nn.max_pool2d")
@register_legalize("relax.nn.avg_pool2d")
def _pool2d(bb, call):
    kind = "max" if call.op.name == "relax.nn.max_pool2d" else "avg"
    return bb.call_te(pool2d, call.args[0], attr(call, "pool_size"),
                      attr(call, "strides"), attr(call, "dilation"), attr(call, "padding"),
                      kind, ceil_mode=attr(call, "ceil_mode"), layout=attr(call, "layout"),
                      count_include_pad=attr(call, "count_include_pad"),
                      out_layout=attr(call, "out_layout"), primfunc_name_hint=f"{kind}_pool2d")


@register_legalize("relax.nn.adaptive_avg_pool2d")
def _adaptive_avg_pool2d(bb, call):
    size = attr(call, "output_size")
    if size is None:  # the input's own height and width
        lay = attr(call, "layout")
        values = call.args[0].struct_info_.shape_values
        size = [values[lay.index("H")], values[lay.index("W")]]
    return bb.call_te(adaptive_pool, call.args[0], list(size), "avg",
                      layout=attr(call, "layout"), out_layout=attr(call, "out_layout"),
                      primfunc_name_hint="adaptive_avg_pool2d")


@register_legalize("relax.nn.layer_norm")
def _layer_norm(bb, call):
    data, gamma, beta = call.args
    return bb.call_te(norm.layer_norm, data, gamma if attr(call, "scale") else None,
                      beta if attr(call, "center") else None, list(attr(call, "axes")),
                      attr(call, "epsilon"), primfunc_name_hint="layer_norm")


@register_legalize("relax.nn.group_norm")
def _group_norm(bb, call):
    data, gamma, beta = call.args
    return bb.call_te(norm.group_norm, data, gamma if attr(call, "scale") else None,
                      beta if attr(call, "center") else None, attr(call, "num_groups"),
                      attr(call, "channel_axis"), list(attr(call, "axes")),
                      attr(call, "epsilon"), primfunc_name_hint="group_norm")


@register_legalize("relax.nn.rms_norm")
def _rms_norm(bb, call):
    return bb.call_te(norm.rms_norm, call.args[0], call.args[1], list(attr(call, "axes")),
                      attr(call, "epsilon"), primfunc_name_hint="rms_norm")


@register_legalize("relax.nn.batch_norm")
def _batch_norm(bb, call):
    data, gamma, beta, moving_mean, moving_var = call.args
    settings = dict(axis=attr(call, "axis"), epsilon=attr(call, "epsilon"),
                    center=attr(call, "center"), scale=attr(call, "scale"),
                    momentum=attr(call, "momentum"))
    if attr(call, "training"):
        return bb.call_te(norm.batch_norm, data, gamma, beta, moving_mean, moving_var,
                          training=True, primfunc_name_hint="batch_norm", **settings)
    # inference: only the output is computed; the moving statistics pass through
    out = bb.emit(bb.call_te(_batch_norm_output, data, gamma, beta, moving_mean, moving_var,
                             primfunc_name_hint="batch_norm", **settings))
    return Tuple([out, moving_mean, moving_var])


def _batch_norm_output(data, gamma, beta, moving_mean, moving_var, **settings):
    return norm.batch_norm(data, gamma, beta, moving_mean, moving_var, training=False,
                           **settings)[0]


@register_legalize("relax.nn.dropout")
def _dropout(bb, call):
    data = call.args[0]
    mask = bb.emit(bb.call_te(full_like, data, 1, primfunc_name_hint="ones"))
    return Tuple([data, mask])


@register_legalize("relax.nn.attention")
def _attention(bb, call):
    q, k, v = call.args[:3]
    bias = call.args[3] if len(call.args) == 4 else None
    return bb.call_te(attention, q, k, v, bias, attr(call, "scale"),
                      attr(call, "causal_mask"), attr(call, "window_size"),
                      primfunc_name_hint="attention")
