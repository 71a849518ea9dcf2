"""Legalization of the indexing operators: take, gather_elements, strided_slice, the
scatters and gather_nd."""
from rvm.topi import index, scatter
from rvm.relax.transform.legalize.registry import attr, register_legalize


@register_legalize("relax.take")
def _take(bb, call):
    return bb.call_te(index.take, call.args[0], call.args[1], axis=attr(call, "axis"),
                      mode=attr(call, "mode", "fast"), primfunc_name_hint="take")


@register_legalize("relax.gather_elements")
def _gather_elements(bb, call):
    return bb.call_te(index.gather_elements, call.args[0], call.args[1],
                      axis=attr(call, "axis"), primfunc_name_hint="gather_elements")


@register_legalize("relax.strided_slice")
def _strided_slice(bb, call):
    strides = attr(call, "strides")
    return bb.call_te(index.strided_slice, call.args[0], list(attr(call, "begin")),
                      list(attr(call, "end")), None if strides is None else list(strides),
                      axes=list(attr(call, "axes")),
                      assume_inbound=attr(call, "assume_inbound", False),
                      primfunc_name_hint="strided_slice")


@register_legalize("relax.scatter_elements")
def _scatter_elements(bb, call):
    return bb.call_te(scatter.scatter_elements, *call.args, axis=attr(call, "axis"),
                      reduction=attr(call, "reduction", "none"),
                      primfunc_name_hint="scatter_elements")


@register_legalize("relax.scatter_nd")
def _scatter_nd(bb, call):
    return bb.call_te(scatter.scatter_nd, *call.args, reduction=attr(call, "reduction", "none"),
                      primfunc_name_hint="scatter_nd")


@register_legalize("relax.gather_nd")
def _gather_nd(bb, call):
    return bb.call_te(scatter.gather_nd, *call.args, batch_dims=attr(call, "batch_dims", 0),
                      primfunc_name_hint="gather_nd")
