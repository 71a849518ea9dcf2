"""Legalization of the creation operators (full, zeros, ones, their _like forms, arange)."""
from rvm.relax.struct_info import TensorStructInfo
from rvm.topi import creation
from rvm.relax.transform.legalize.registry import register_legalize


def _target(call):
    """The result's shape and dtype, when known."""
    sinfo = call.struct_info_
    if isinstance(sinfo, TensorStructInfo) and sinfo.shape_values is not None and \
            sinfo.dtype is not None:
        return list(sinfo.shape_values), str(sinfo.dtype)
    return None, None


@register_legalize("relax.full")
@register_legalize("relax.full_like")
def _full(bb, call):
    shape, dtype = _target(call)
    if shape is None:
        return call
    return bb.call_te(creation.full, shape, dtype, call.args[1], primfunc_name_hint="full")


def _constant(value):
    def rule(bb, call):
        shape, dtype = _target(call)
        if shape is None:
            return call
        return bb.call_te(creation.full, shape, dtype, value,
                          primfunc_name_hint="zeros" if value == 0 else "ones")

    return rule


for _name, _value in (("zeros", 0), ("ones", 1)):
    register_legalize(f"relax.{_name}")(_constant(_value))
    register_legalize(f"relax.{_name}_like")(_constant(_value))


@register_legalize("relax.arange")
def _arange(bb, call):
    start, end, step = (a.value for a in call.args)
    return bb.call_te(creation.arange, start, end, step, str(call.struct_info_.dtype),
                      primfunc_name_hint="arange")


