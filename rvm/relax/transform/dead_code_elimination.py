"""DeadCodeElimination: drop unused pure bindings and unreachable functions.

- Inside each Relax function, a binding whose variable is never used and whose
  value is pure (no impure call, no ``If``) is removed; this repeats until
  nothing changes, so chains of dead values disappear. ``match_cast`` bindings
  are kept (they check values at run time).
- Functions not reachable from the entry functions are removed. The entry
  functions are ``entry_functions`` when given, else every function with a
  ``global_symbol`` (the externally visible ones); a module with none of those
  (built by hand, say ``IRModule({"main": f})``) keeps every Relax function as
  an entry rather than losing everything. A function is reached
  through its GlobalVar or through its name in an ExternFunc
  (``call_dps_packed("linear0", ...)`` runs the module's kernel ``linear0``).
"""
from rvm.ir.expr import GlobalVar
from rvm.relax.analysis.var_analysis import all_global_vars, used_vars
from rvm.relax.binding import VarBinding
from rvm.relax.expr import ExternFunc
from rvm.relax.expr_functor import ExprMutator, ExprVisitor
from rvm.relax.function import Function
from rvm.relax.transform.function_pass import replace_functions
from rvm.ir.transform import ModulePass, PassInfo
from rvm.relax.transform.purity import is_pure_value


class _Remover(ExprMutator):
    def __init__(self, used, mod):
        super().__init__()
        self.used = used
        self.mod = mod
        self.removed = 0

    def _dead(self, binding):
        return (isinstance(binding, VarBinding) and id(binding.var) not in self.used
                and is_pure_value(binding.value, self.mod))

    def visit_var_binding_(self, binding):
        if self._dead(binding):
            self.removed += 1
            return
        super().visit_var_binding_(binding)


def remove_unused_bindings(func, mod=None):
    """``func`` without unused pure bindings (repeated until none is left)."""
    while True:
        remover = _Remover({id(v) for v in used_vars(func)}, mod)
        new = remover.visit_expr(func)
        if not remover.removed:
            return func
        func = new


class _ExternNames(ExprVisitor):
    def __init__(self):
        self.names = []

    def visit_relax_expr_(self, expr):
        if isinstance(expr, ExternFunc):
            self.names.append(expr.global_symbol)


def _extern_names(func):
    """Names called by name (call_dps_packed("linear0", ...) may name a kernel of the module)."""
    collector = _ExternNames()
    collector.visit_expr(func)
    return collector.names


def _reachable(mod, entries):
    seen = set()
    stack = list(entries)
    while stack:
        name = stack.pop()
        if name in seen or name not in mod:
            continue
        seen.add(name)
        func = mod[name]
        if isinstance(func, Function):
            stack.extend(gv.name_hint for gv in all_global_vars(func))
            stack.extend(_extern_names(func))
    return seen


def dead_code_elimination(mod, entry_functions=None):
    """``mod`` with dead bindings and unreachable functions removed (module docstring)."""
    if entry_functions is None:
        entry_functions = [gv.name_hint for gv, f in mod.functions.items()
                           if f.get_attr("global_symbol") is not None]
        if not entry_functions:
            entry_functions = [gv.name_hint for gv, f in mod.functions.items()
                               if isinstance(f, Function)]
    entries = [e.name_hint if isinstance(e, GlobalVar) else e for e in entry_functions]
    keep = _reachable(mod, entries)
    changed = {}
    for gv, func in mod.functions.items():
        if isinstance(func, Function) and gv.name_hint in keep:
            new = remove_unused_bindings(func, mod)
            if new is not func:
                changed[gv] = new
    out = replace_functions(mod, changed)
    dropped = [gv for gv in out.get_global_vars() if gv.name_hint not in keep]
    if dropped:
        out = out.copy()
        for gv in dropped:
            out.remove(gv)
    return out


def DeadCodeElimination(entry_functions=None):  # noqa: N802  (passes are CamelCase factories)
    """A pass removing unused pure bindings and functions unreachable from the entries."""
    return ModulePass(lambda mod, ctx: dead_code_elimination(mod, entry_functions),
                      PassInfo(1, "DeadCodeElimination"))

