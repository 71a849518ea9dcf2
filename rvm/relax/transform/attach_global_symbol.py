"""AttachGlobalSymbol: give every function the ``global_symbol`` attribute its name.

The VM codegen and the kernel builder name a function in the executable by
its ``global_symbol``; functions built privately (kernels from ``emit_te``,
helper Relax functions) get their GlobalVar's name. An existing
``global_symbol`` is kept.
"""
from rvm.relax.transform.function_pass import replace_functions
from rvm.ir.transform import ModulePass, PassInfo


def attach_global_symbol(mod, ctx=None):
    """``mod`` with ``global_symbol`` set on every function that lacks it."""
    changed = {}
    for gv, func in mod.functions.items():
        if hasattr(func, "with_attr") and func.get_attr("global_symbol") is None:
            changed[gv] = func.with_attr("global_symbol", gv.name_hint)
    return replace_functions(mod, changed)


def AttachGlobalSymbol():  # noqa: N802  (passes are CamelCase factories)
    """A pass setting ``global_symbol`` = the function's name where it is missing."""
    return ModulePass(attach_global_symbol, PassInfo(0, "AttachGlobalSymbol"))
