"""Legalization of the elementwise operators: unary math, binary arithmetic, comparisons,
logical operators, ``where``, ``clip`` and ``astype``, each to one topi kernel."""
from rvm.topi import broadcast, elemwise
from rvm.relax.transform.legalize.registry import attr, register_legalize, te_rule

UNARY = (
    "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh", "erf", "exp",
    "floor", "isfinite", "isinf", "isnan", "log", "logical_not", "negative", "round", "rsqrt",
    "sigmoid", "sign", "sin", "sinh", "sqrt", "square", "tan", "tanh",
)
BINARY = (
    "add", "subtract", "multiply", "divide", "floor_divide", "power", "maximum", "minimum", "mod",
    "floor_mod", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_xor",
)

for _name in UNARY:
    te_rule(f"relax.{_name}", getattr(elemwise, _name))
for _name in BINARY:  # R.add(x, R.const(1.5, "float32")): 1.5 goes inside the kernel
    te_rule(f"relax.{_name}", getattr(broadcast, _name), scalars=True)
te_rule("relax.where", broadcast.where)
te_rule("relax.clip", elemwise.clip)


@register_legalize("relax.astype")
def _astype(bb, call):
    return bb.call_te(elemwise.cast, call.args[0], str(attr(call, "dtype")),
                      primfunc_name_hint="cast")
