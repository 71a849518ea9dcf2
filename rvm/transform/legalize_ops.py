"""LegalizeOps: lower high-level operators (``R.add``, ``R.matmul``, ``R.nn.relu`` ...) to
``call_tir`` of kernels made from ``topi`` compute definitions.

The legalization rules are a table in this layer, keyed by operator name,
so ``relax.op`` never imports ``topi``: ``LEGALIZE_RULES[name](bb, call)``
returns the replacement expression, usually ``bb.call_te(topi_fn, *args)``,
which adds the kernel to the module (reusing a structurally equal one).
``register_legalize(name)`` adds or replaces a rule. Operators without a
rule are left as they are.
"""
from rvm.relax.expr_functor import ExprMutator
from rvm.relax.function import Function
from rvm.relax.op.registry import Op
from rvm.relax.struct_info import TensorStructInfo
from rvm.transform.function_pass import replace_functions
from rvm.topi import broadcast, elemwise, reduction, transform
from rvm.topi.matmul import matmul as te_matmul
from rvm.topi.nn.elemwise import relu
from rvm.topi.nn.softmax import softmax
from rvm.transform import legalize_te
from rvm.transform.pass_infra import ModulePass, PassInfo

LEGALIZE_RULES = {}


def register_legalize(op_name):
    """Decorator: registers ``fn(bb, call) -> Expr`` as the legalization of ``op_name``."""

    def register(fn):
        LEGALIZE_RULES[op_name] = fn
        return fn

    return register


def _te_rule(op_name, topi_fn, **fixed):
    def rule(bb, call):
        return bb.call_te(topi_fn, *call.args, primfunc_name_hint=op_name.split(".")[-1],
                          **fixed)

    LEGALIZE_RULES[op_name] = rule


for _name in ("add", "subtract", "multiply", "divide", "floor_divide", "maximum", "minimum",
              "power"):
    _te_rule(f"relax.{_name}", getattr(broadcast, _name))
for _name in ("exp", "log", "sqrt", "tanh", "sigmoid", "negative", "abs"):
    _te_rule(f"relax.{_name}", getattr(elemwise, _name))
_te_rule("relax.nn.relu", relu)
for _name in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"):
    _te_rule(f"relax.{_name}", legalize_te.comparison(_name))
_te_rule("relax.rsqrt", legalize_te.rsqrt)
_te_rule("relax.nn.gelu", legalize_te.gelu)
_te_rule("relax.nn.silu", legalize_te.silu)


def _attr(call, key, default=None):
    return (call.attrs or {}).get(key, default)


@register_legalize("relax.matmul")
def _matmul(bb, call):
    return bb.call_te(te_matmul, call.args[0], call.args[1],
                      out_dtype=_attr(call, "out_dtype"), primfunc_name_hint="matmul")


@register_legalize("relax.nn.softmax")
def _softmax(bb, call):
    return bb.call_te(softmax, call.args[0], axis=_attr(call, "axis", -1),
                      primfunc_name_hint="softmax")


@register_legalize("relax.nn.log_softmax")
def _log_softmax(bb, call):
    return bb.call_te(legalize_te.log_softmax, call.args[0], axis=_attr(call, "axis", -1),
                      primfunc_name_hint="log_softmax")


@register_legalize("relax.concat")
def _concat(bb, call):
    return bb.call_te(legalize_te.concat, call.args[0], axis=_attr(call, "axis", 0),
                      primfunc_name_hint="concat")


@register_legalize("relax.permute_dims")
def _permute_dims(bb, call):
    return bb.call_te(transform.transpose, call.args[0], axes=_attr(call, "axes"),
                      primfunc_name_hint="transpose")


def _reshape_to_sinfo(bb, call, name):
    sinfo = call.struct_info_
    if not isinstance(sinfo, TensorStructInfo) or sinfo.shape_values is None:
        return call
    return bb.call_te(transform.reshape, call.args[0], list(sinfo.shape_values),
                      primfunc_name_hint=name)


LEGALIZE_RULES["relax.reshape"] = lambda bb, call: _reshape_to_sinfo(bb, call, "reshape")
LEGALIZE_RULES["relax.flatten"] = lambda bb, call: _reshape_to_sinfo(bb, call, "flatten")


@register_legalize("relax.astype")
def _astype(bb, call):
    return bb.call_te(elemwise.cast, call.args[0], str(_attr(call, "dtype")),
                      primfunc_name_hint="cast")


def _reduction(op_name, topi_fn):
    def rule(bb, call):
        return bb.call_te(topi_fn, call.args[0], axis=_attr(call, "axis"),
                          keepdims=_attr(call, "keepdims", False),
                          primfunc_name_hint=op_name.split(".")[-1])

    LEGALIZE_RULES[op_name] = rule


for _name in ("sum", "mean", "max", "min"):
    _reduction(f"relax.{_name}", getattr(reduction, _name))


class _Legalizer(ExprMutator):
    def visit_call_(self, call):
        call = super().visit_call_(call)
        rule = LEGALIZE_RULES.get(call.op.name) if isinstance(call.op, Op) else None
        if rule is None:
            return call
        if call.struct_info_ is None:
            call = self.builder.normalize(call)
        return rule(self.builder, call)


def legalize_ops(mod):
    """``mod`` with every high-level operator that has a rule lowered to call_tir."""
    legalizer = _Legalizer(mod)
    changed = {}
    for gv, func in mod.functions.items():
        if isinstance(func, Function):
            new = legalizer.visit_expr(func)
            if new is not func:
                changed[gv] = new
    if not changed:
        return mod
    out = replace_functions(mod, changed)
    for gv, func in legalizer.builder.get().functions.items():
        if gv.name_hint not in out:
            out.add(gv.name_hint, func)
    return out


def LegalizeOps():  # noqa: N802  (passes are CamelCase factories)
    """A pass lowering high-level operators to call_tir of topi kernels (module docstring)."""
    return ModulePass(lambda mod, ctx: legalize_ops(mod), PassInfo(0, "LegalizeOps"))
