"""Legalization of the neural-network operators (``relax.nn.*``) to topi.nn kernels."""
from rvm.topi.nn import elemwise as nn_elemwise
from rvm.topi.nn.softmax import log_softmax, softmax
from rvm.transform.legalize.registry import attr, kernel_name, register_legalize, te_rule

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
