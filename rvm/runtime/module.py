"""Runtime modules: named collections of packed functions (kernel libraries, external runtimes).

A module resolves a name among its own functions first, then among the
modules it imports. Modules that can be saved into an executable implement
``save_to_bytes`` and register a loader for their ``type_key``: with
``register_module_loader``, or as TVM does, as the global function
``runtime.module.loadbinary_<type_key>`` (or ``module.loadbinary_<type_key>``)
taking the saved bytes. A global function registered that way wins over a
loader of rvm's own for the same type, with a warning naming both.
"""
import sys
import warnings

from rvm.runtime.packed_func import INTERNAL, USER, get_global_func, register_object_type
from rvm.runtime.profiling import time_evaluator as _time_evaluator

_LOADERS = {}
_LOADER_ORIGINS = {}  # type_key -> who registered its loader (packed_func's INTERNAL / USER)
# The global-function names of a loader of type_key, in the order they are looked up.
LOADBINARY_PREFIXES = ("runtime.module.loadbinary_", "module.loadbinary_")


class ModuleLoaderClash(UserWarning):
    """A module type has both a loader of rvm's own and a global ``loadbinary`` function."""


@register_object_type  # passed through packed calls as itself, though callable
class Module:
    """Base class of runtime modules.

    Subclasses implement ``_get_own_function(name)`` (a PackedFunc or None) and
    ``_own_function_names()``, and, when they can be saved, ``save_to_bytes``.
    """

    type_key = "module"
    # The name of the module's entry function (TVM's "__tvm_main__"): ``mod(*args)`` calls it.
    entry_name = "__rvm_main__"

    def __init__(self):
        self.imported_modules = []

    def _entry_function_name(self):
        """The function ``entry_name`` stands for: the module's only own function, else its
        ``main``; ValueError otherwise."""
        names = list(self._own_function_names())
        if len(names) == 1:
            return names[0]
        if "main" in names:
            return "main"
        raise ValueError(f"module '{self.type_key}' has no entry function: it has "
                         f"{len(names)} functions ({', '.join(sorted(names)) or 'none'}) and "
                         f"none named 'main'; call one by name, mod[name]")

    def __call__(self, *args):
        """Calls the entry function (``mod[mod.entry_name](*args)``)."""
        return self.get_function(self.entry_name)(*args)

    def get_function_list(self):
        """The names of the module's own functions (TVM's ``get_function_list``)."""
        return list(self._own_function_names())

    def _get_own_function(self, name):
        return None

    def _own_function_names(self):
        return []

    def get_function(self, name, allow_missing=False):
        """The function ``name`` of this module or its imports; ValueError if absent.
        ``entry_name`` names the entry function."""
        if name == self.entry_name and self._get_own_function(name) is None:
            try:
                name = self._entry_function_name()
            except ValueError:
                if allow_missing:
                    return None
                raise
        func = self._get_own_function(name)
        if func is None:
            for mod in self.imported_modules:
                func = mod.get_function(name, allow_missing=True)
                if func is not None:
                    break
        if func is None and not allow_missing:
            raise ValueError(f"module '{self.type_key}' has no function '{name}'; it has: "
                             f"{', '.join(sorted(self.function_names())) or 'nothing'}")
        return func

    def __getitem__(self, name):
        return self.get_function(name)

    def __contains__(self, name):
        return self.get_function(name, allow_missing=True) is not None

    def function_names(self):
        """Names of every function reachable from this module."""
        names = list(self._own_function_names())
        for mod in self.imported_modules:
            names.extend(mod.function_names())
        return names

    def import_module(self, module):
        """Makes ``module``'s functions reachable from this one."""
        if not isinstance(module, Module):
            raise TypeError(f"import_module expects a Module, got {type(module).__name__}")
        self.imported_modules.append(module)

    def time_evaluator(self, name, dev=None, number=10, repeat=1, min_repeat_ms=0):
        """A timer for function ``name`` (see rvm.runtime.time_evaluator); dev must be cpu."""
        return _time_evaluator(self.get_function(name), number, repeat, min_repeat_ms)

    def save_to_bytes(self):
        """The module's serialized form (with ``type_key``, what ``load_from_bytes`` reads)."""
        raise NotImplementedError(f"module '{self.type_key}' cannot be saved")

    def __repr__(self):
        return f"<rvm.runtime.Module {self.type_key}: {len(self._own_function_names())} functions>"


def register_module_loader(type_key, loader, takes_trust=False):
    """Registers ``loader(data: bytes) -> Module`` for modules saved with ``type_key``.

    A loader of native code passes ``takes_trust=True`` and accepts a
    ``trust_native`` keyword (see ``load_module_from_bytes``). A loader of code outside
    rvm replacing one of rvm's own wins, with a ModuleLoaderClash warning.
    """
    caller = sys._getframe(1).f_globals.get("__name__", "")
    origin = INTERNAL if caller == "rvm" or caller.startswith("rvm.") else USER
    if origin == USER and _LOADER_ORIGINS.get(type_key) == INTERNAL:
        warnings.warn(f"runtime module type '{type_key}': your loader replaces rvm's built-in "
                      "loader", ModuleLoaderClash, stacklevel=2)
    _LOADERS[type_key] = (loader, takes_trust)
    _LOADER_ORIGINS[type_key] = origin


def _global_loaders(type_key):
    """[(name, function)] of the registered ``loadbinary`` global functions of type_key."""
    found = []
    for prefix in LOADBINARY_PREFIXES:
        func = get_global_func(prefix + type_key, allow_missing=True)
        if func is not None:
            found.append((prefix + type_key, func))
    return found


def load_module_from_bytes(type_key, data, trust_native=False):
    """Rebuilds a module saved by ``save_to_bytes``; ValueError for an unknown type_key.

    A global function ``runtime.module.loadbinary_<type_key>`` (then
    ``module.loadbinary_<type_key>``) loads it when registered, given the bytes; it wins
    over a loader of rvm's own (``register_module_loader``), with a ModuleLoaderClash
    warning. ``trust_native=True`` lets rvm's loaders of native code run code the bytes
    carry (hand-written C); without it they refuse it.
    """
    entry = _LOADERS.get(type_key)
    registered = _global_loaders(type_key)
    if registered:
        (name, func), others = registered[0], [n for n, _ in registered[1:]]
        if entry is not None or others:
            shadowed = others + (["rvm's built-in loader"] if entry is not None else [])
            warnings.warn(f"runtime module type '{type_key}' is loaded by the global function "
                          f"'{name}', not by {' or '.join(shadowed)}",
                          ModuleLoaderClash, stacklevel=2)
        module = func(bytes(data))
        if not isinstance(module, Module):
            raise TypeError(f"'{name}' must return an rvm.runtime.Module, got "
                            f"{type(module).__name__}")
        return module
    if entry is None:
        raise ValueError(f"no loader for runtime module type '{type_key}'; "
                         f"known: {', '.join(sorted(_LOADERS)) or 'none'}; or register the "
                         f"global function 'runtime.module.loadbinary_{type_key}'")
    loader, takes_trust = entry
    return loader(data, trust_native=trust_native) if takes_trust else loader(data)
