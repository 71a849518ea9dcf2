"""Where a function-table entry's callee comes from, and which registered globals an
executable loaded from a file may call.

An entry is looked up in a stated order: the executable's kernel libraries, then (for
PACKED entries) its imported modules, then the global registry. An executable built in
this process (``relax.build``) may call any registered global. One loaded from a file
(``load_module``, ``Executable.load``, the CLI) carries a ``GlobalPolicy``: it may call
the VM builtins and the functions the user's own code registered (environment
functions), or, when the loader was given an allow-list, the VM builtins and exactly the
names listed; the same holds for the functions its regenerated kernels call with
``T.call_packed``. rvm's internal globals (registered by the compiler, codegens, tools: see
``rvm.runtime.packed_func.global_func_origin``) are refused unless listed. The check runs
at load and again when a VirtualMachine links the executable (rvm.vm.link), so both
engines see only permitted callees.
"""
from rvm.bytecode.errors import ExecutableFormatError
from rvm.bytecode.function import FuncKind
from rvm.runtime.packed_func import BUILTIN, INTERNAL, USER, get_global_func, global_func_origin


class GlobalPolicy:
    """The registered globals an executable from a file may call: VM builtins, and either
    every user registration (``allow`` None) or exactly the names in ``allow``."""

    def __init__(self, allow=None):
        if allow is not None:
            if isinstance(allow, str) or not all(isinstance(n, str) for n in allow):
                raise TypeError(f"allow must be a list of function names (str), got "
                                f"{allow!r:.80}")
            allow = frozenset(allow)
        self.allow = allow

    def refusal(self, name):
        """None when global ``name`` may be called, else why not (a phrase)."""
        origin = global_func_origin(name)
        if origin is None or origin == BUILTIN or (self.allow is not None and name in self.allow):
            return None
        if self.allow is not None:
            return "it is not a VM builtin and not in the loader's allow-list"
        if origin == USER:
            return None
        assert origin == INTERNAL
        return ("it is one of rvm's internal functions, not a VM builtin or a function your "
                "code registered (pass allow=[...] to the loader to permit it)")


def lookup_callee(ex, info):
    """The callee of function-table entry ``info`` found in the stated order, or None."""
    for mod in ex.kernel_libs:
        func = mod.get_function(info.name, allow_missing=True)
        if func is not None:
            return func
    if info.kind != FuncKind.PACKED:
        return None
    for mod in ex.imported_modules:
        func = mod.get_function(info.name, allow_missing=True)
        if func is not None:
            return func
    return get_global_func(info.name, allow_missing=True)


def _global_entries(ex):
    """Names of the globals ``ex`` may reach: its PACKED entries no kernel library or
    imported module provides, then the functions its regenerated kernels look up."""
    own = list(ex.kernel_libs) + list(ex.imported_modules)
    for info in ex.func_table:
        if info.kind != FuncKind.PACKED:
            continue
        if any(m.get_function(info.name, allow_missing=True) is not None for m in own):
            continue
        yield info.name
    for lib in ex.kernel_libs:
        yield from getattr(lib, "packed_callees", None) or ()


def check_global_callees(ex, where="executable"):
    """Raises ExecutableFormatError naming every global the function table of ``ex``
    refers to that its ``global_policy`` does not permit (no check without a policy)."""
    policy = getattr(ex, "global_policy", None)
    if policy is None:
        return
    refused = [(name, why) for name in dict.fromkeys(_global_entries(ex))
               for why in [policy.refusal(name)] if why is not None]
    if refused:
        lines = "\n".join(f"  '{name}': {why}" for name, why in refused)
        raise ExecutableFormatError(
            f"{where}: refused: the executable calls {len(refused)} registered function(s) "
            f"a file may not call:\n{lines}")
