"""The ``builtin`` decorator: registers a VM builtin in the global registry.

The VM calls builtins (and every other Python-implemented packed function)
without the packed-call wrapper; ``BUILTINS`` maps names to implementations.
"""
from rvm.runtime.packed_func import register_func

BUILTINS = {}


def builtin(name):
    """Registers the decorated function as the global function ``name``."""
    def register(fn):
        BUILTINS[name] = fn
        register_func(name, fn, override=True)
        return fn
    return register
