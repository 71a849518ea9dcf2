"""Legalization of the reductions (sum, prod, mean, max, min, variance, std, argmax, argmin)
to topi's, with init blocks, and of the scans cumsum and cumprod."""
from rvm.topi import reduction, scan
from rvm.relax.transform.legalize.registry import LEGALIZE_RULES, attr, kernel_name


def _reduction(op_name, topi_fn, single_axis=False):
    def rule(bb, call):
        axis = attr(call, "axis")
        if axis is not None and not single_axis:
            axis = list(axis)
        return bb.call_te(topi_fn, call.args[0], axis=axis,
                          keepdims=attr(call, "keepdims", False),
                          primfunc_name_hint=kernel_name(call))

    LEGALIZE_RULES[op_name] = rule


def _scan(op_name, topi_fn):
    def rule(bb, call):
        dtype = attr(call, "dtype")
        return bb.call_te(topi_fn, call.args[0], axis=attr(call, "axis"),
                          dtype=None if dtype is None else str(dtype),
                          exclusive=attr(call, "exclusive", False),
                          primfunc_name_hint=kernel_name(call))

    LEGALIZE_RULES[op_name] = rule


for _name in ("sum", "prod", "mean", "max", "min", "variance", "std"):
    _reduction(f"relax.{_name}", getattr(reduction, _name))
for _name in ("argmax", "argmin"):
    _reduction(f"relax.{_name}", getattr(reduction, _name), single_axis=True)
for _name in ("cumsum", "cumprod"):
    _scan(f"relax.{_name}", getattr(scan, _name))
