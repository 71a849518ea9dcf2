"""LegalizeOps: lower high-level operators (``R.add``, ``R.matmul``, ``R.nn.relu`` ...) to
``call_tir`` of kernels made from ``topi`` compute definitions.

The legalization rules are a table in this layer, keyed by operator name,
so ``relax.op`` never imports ``topi``: ``LEGALIZE_RULES[name](bb, call)``
returns the replacement expression, usually ``bb.call_te(topi_fn, *args)``,
which adds the kernel to the module (reusing a structurally equal one).
The rules live in ``rvm.relax.transform.legalize``, one module per operator
family; ``register_legalize(name)`` adds or replaces a rule. Operators
without a rule are left as they are. Scalar constants of the elementwise
binary operators (``R.add(x, R.const(1, "float32"))``) become constants
inside the kernel rather than extra tensor arguments.
"""
from rvm.relax.expr_functor import ExprMutator
from rvm.relax.op.registry import Op
from rvm.relax.transform.function_pass import rewrite_functions
from rvm.relax.transform.legalize import (  # noqa: F401  (each family registers its rules)
    create, elementwise, index, linear_algebra, manipulate, nn, statistical,
)
from rvm.relax.transform.legalize.registry import LEGALIZE_RULES, register_legalize
from rvm.ir.transform import ModulePass, PassInfo

__all__ = ["LEGALIZE_RULES", "LegalizeOps", "legalize_ops", "register_legalize"]


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
    return rewrite_functions(mod, _Legalizer(mod))


def LegalizeOps():  # noqa: N802  (passes are CamelCase factories)
    """A pass lowering high-level operators to call_tir of topi kernels (module docstring)."""
    return ModulePass(lambda mod, ctx: legalize_ops(mod), PassInfo(0, "LegalizeOps"))
