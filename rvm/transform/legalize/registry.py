"""The legalization table: operator name -> ``rule(bb, call) -> Expr``.

A rule returns the replacement of a (normalized) call, usually
``bb.call_te(topi_fn, *args)``, which adds the kernel to the module
(reusing a structurally equal one). Returning the call unchanged leaves the
operator in place (a shape the kernel cannot be built for, for instance).
"""

LEGALIZE_RULES = {}


def register_legalize(op_name):
    """Decorator: registers ``fn(bb, call) -> Expr`` as the legalization of ``op_name``."""

    def register(fn):
        LEGALIZE_RULES[op_name] = fn
        return fn

    return register


def te_rule(op_name, topi_fn, **fixed):
    """Registers ``call_te(topi_fn, *call.args, **fixed)`` as the rule of ``op_name``; the
    kernel is named after the operator."""

    def rule(bb, call):
        return bb.call_te(topi_fn, *call.args, primfunc_name_hint=op_name.split(".")[-1],
                          **fixed)

    LEGALIZE_RULES[op_name] = rule
    return rule


def attr(call, key, default=None):
    """The attribute ``key`` of ``call`` (``default`` when absent)."""
    return (call.attrs or {}).get(key, default)


def kernel_name(call):
    """The kernel name hint for a call: the operator's last name component."""
    return call.op.name.split(".")[-1]
