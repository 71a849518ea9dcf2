"""Legalization of ``matmul`` to topi.matmul (numpy's rules, 1-D operands included)."""
from rvm.topi.matmul import matmul
from rvm.relax.transform.legalize.registry import attr, register_legalize


@register_legalize("relax.matmul")
def _matmul(bb, call):
    return bb.call_te(matmul, call.args[0], call.args[1], out_dtype=attr(call, "out_dtype"),
                      primfunc_name_hint="matmul")
