"""RunCodegen: hand every function with a ``Codegen`` attribute to its codegen.

The functions with ``Codegen="<name>"`` (from MergeCompositeFunctions or
FuseOpsByPattern(annotate_codegen=True)) are grouped by name and passed, in
module order, to the global function ``relax.ext.<name>(functions, options,
constant_names)``, which returns the runtime Modules implementing them (one
packed function per Codegen function, named by its ``global_symbol``). Each
call of such a function becomes ``R.call_dps_packed("<symbol>", args,
out_sinfo=...)``, the functions are removed, and the modules are appended
to the module attribute ``"external_mods"``, which ``relax.build`` imports
into the executable (the VM finds the symbols there). ``target_options``
maps a codegen's name to the options it receives.
"""
from rvm.ir.expr import GlobalVar
from rvm.relax.analysis.var_analysis import all_global_vars
from rvm.relax.expr import Call, ExternFunc, Tuple
from rvm.relax.expr_functor import ExprMutator
from rvm.relax.function import Function
from rvm.relax.op.base import call_dps_packed
from rvm.runtime.module import Module
from rvm.runtime.packed_func import get_global_func, list_global_func_names
from rvm.relax.transform.function_pass import rewrite_functions
from rvm.relax.transform.fuse_ops_by_pattern import CODEGEN, COMPOSITE
from rvm.ir.transform import ModulePass, PassInfo

EXTERNAL_MODS = "external_mods"
_EXT_PREFIX = "relax.ext."


def _symbol(gv, func):
    symbol = func.get_attr("global_symbol")
    return symbol if isinstance(symbol, str) else gv.name_hint


class _CallRewriter(ExprMutator):
    def __init__(self, mod, symbols):
        super().__init__(mod)
        self.symbols = symbols

    def visit_call_(self, call):
        call = super().visit_call_(call)
        if isinstance(call.op, GlobalVar) and call.op.name_hint in self.symbols:
            return call_dps_packed(ExternFunc(self.symbols[call.op.name_hint]),
                                   Tuple(list(call.args)), out_sinfo=call.struct_info_)
        return call


def _codegen(name):
    func = get_global_func(_EXT_PREFIX + name, allow_missing=True)
    if func is None:
        known = sorted(n[len(_EXT_PREFIX):] for n in list_global_func_names()
                       if n.startswith(_EXT_PREFIX))
        raise ValueError(f"RunCodegen: no codegen '{name}': the global function "
                         f"'{_EXT_PREFIX}{name}' is not registered; registered codegens: "
                         f"{', '.join(known) or 'none'}")
    return func


def run_codegen(mod, target_options=None):
    """``mod`` with its Codegen functions compiled to external modules (module docstring)."""
    target_options = dict(target_options or {})
    by_codegen, symbols = {}, {}
    for gv, func in mod.functions.items():
        if isinstance(func, Function) and func.get_attr(CODEGEN):
            by_codegen.setdefault(func.get_attr(CODEGEN), []).append(func)
            symbols[gv.name_hint] = _symbol(gv, func)
    if not by_codegen:
        return mod
    modules = list(mod.get_attr(EXTERNAL_MODS) or [])
    for name, funcs in by_codegen.items():
        produced = _codegen(name)(funcs, target_options.get(name, {}), {})
        produced = list(produced) if isinstance(produced, (list, tuple)) else [produced]
        for module in produced:
            if not isinstance(module, Module):
                raise TypeError(f"RunCodegen: '{_EXT_PREFIX}{name}' returned a "
                                f"{type(module).__name__}; expected rvm.runtime.Module objects")
        missing = [s for f in funcs for s in [f.get_attr("global_symbol")]
                   if isinstance(s, str) and not any(
                       m.get_function(s, allow_missing=True) for m in produced)]
        if missing:
            raise ValueError(f"RunCodegen: the modules of codegen '{name}' lack the functions "
                             f"{', '.join(missing)}")
        modules.extend(produced)
    out = rewrite_functions(mod, _CallRewriter(mod, symbols),
                            select=lambda f: not f.get_attr(CODEGEN))
    for gv in [gv for gv in out.functions if gv.name_hint in symbols]:
        out.remove(gv)
    used = {gv.name_hint for f in out.functions.values() if isinstance(f, Function)
            for gv in all_global_vars(f)}
    for gv, func in list(out.functions.items()):
        if isinstance(func, Function) and func.get_attr(COMPOSITE) and gv.name_hint not in used:
            out.remove(gv)
    return out.with_attr(EXTERNAL_MODS, modules)


def RunCodegen(target_options=None):  # noqa: N802  (passes are CamelCase factories)
    """A pass handing the Codegen functions to their codegens (module docstring)."""
    return ModulePass(lambda mod, ctx: run_codegen(mod, target_options),
                      PassInfo(0, "RunCodegen"))
