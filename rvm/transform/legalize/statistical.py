"""Legalization of the reductions (sum, mean, max, min, ...) to topi's, with init blocks."""
from rvm.topi import reduction
from rvm.transform.legalize.registry import LEGALIZE_RULES, attr, kernel_name


def _reduction(op_name, topi_fn):
    def rule(bb, call):
        axis = attr(call, "axis")
        return bb.call_te(topi_fn, call.args[0], axis=None if axis is None else list(axis),
                          keepdims=attr(call, "keepdims", False),
                          primfunc_name_hint=kernel_name(call))

    LEGALIZE_RULES[op_name] = rule


for _name in ("sum", "mean", "max", "min"):
    _reduction(f"relax.{_name}", getattr(reduction, _name))
