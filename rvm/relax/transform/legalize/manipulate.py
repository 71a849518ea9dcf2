"""Legalization of the shape and joining operators: reshape, flatten, permute_dims,
expand_dims, squeeze, broadcast_to, concat, split, tile, repeat."""
from rvm.relax.struct_info import TensorStructInfo
from rvm.topi import join, transform
from rvm.relax.transform.legalize.registry import attr, kernel_name, register_legalize


def _known_shape(call):
    sinfo = call.struct_info_
    if isinstance(sinfo, TensorStructInfo) and sinfo.shape_values is not None:
        return list(sinfo.shape_values)
    return None


@register_legalize("relax.reshape")
@register_legalize("relax.flatten")
def _reshape(bb, call):
    shape = _known_shape(call)
    if shape is None:  # a shape known only at run time: no kernel can be made for it
        return call
    return bb.call_te(transform.reshape, call.args[0], shape, primfunc_name_hint=kernel_name(call))


@register_legalize("relax.broadcast_to")
def _broadcast_to(bb, call):
    shape = _known_shape(call)
    if shape is None:
        return call
    return bb.call_te(transform.broadcast_to, call.args[0], shape,
                      primfunc_name_hint="broadcast_to")


@register_legalize("relax.permute_dims")
def _permute_dims(bb, call):
    return bb.call_te(transform.transpose, call.args[0], axes=attr(call, "axes"),
                      primfunc_name_hint="transpose")


@register_legalize("relax.expand_dims")
def _expand_dims(bb, call):
    return bb.call_te(transform.expand_dims, call.args[0], list(attr(call, "axis")),
                      primfunc_name_hint="expand_dims")


@register_legalize("relax.squeeze")
def _squeeze(bb, call):
    axis = attr(call, "axis")
    return bb.call_te(transform.squeeze, call.args[0], None if axis is None else list(axis),
                      primfunc_name_hint="squeeze")


@register_legalize("relax.concat")
def _concat(bb, call):
    return bb.call_te(join.concatenate, call.args[0], axis=attr(call, "axis", 0),
                      primfunc_name_hint="concatenate")


@register_legalize("relax.split")
def _split(bb, call):
    spec = attr(call, "indices_or_sections")
    spec = spec if isinstance(spec, int) else list(spec)
    return bb.call_te(join.split, call.args[0], spec, axis=attr(call, "axis", 0),
                      primfunc_name_hint="split")


@register_legalize("relax.tile")
def _tile(bb, call):
    return bb.call_te(join.tile, call.args[0], list(attr(call, "repeats")),
                      primfunc_name_hint="tile")


@register_legalize("relax.repeat")
def _repeat(bb, call):
    return bb.call_te(join.repeat, call.args[0], attr(call, "repeats"), attr(call, "axis"),
                      primfunc_name_hint="repeat")
