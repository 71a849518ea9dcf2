"""PackedFunc and the global function registry, shared with C.

A PackedFunc is a function of the packed calling convention. Calling one
implemented in C converts the arguments in C (no Python frame in between);
calling one implemented in Python checks the arguments and calls it directly.
"""
import difflib
import sys

import numpy as np

from rvm.runtime._ffi import _bridge
from rvm.runtime.container import Array, Map, ShapeTuple
from rvm.runtime.data_type import DataType
from rvm.runtime.device import Device
from rvm.runtime.ndarray import NDArray, array, from_dlpack
from rvm.support.errors import RVMError

PackedFunc = _bridge.PackedFunc

_opaque_types = [Map, dict]


def register_object_type(cls):
    """Lets instances of ``cls`` pass through packed functions as opaque objects.

    Higher layers register their node classes this way (the runtime never imports them).
    """
    if cls not in _opaque_types:
        _opaque_types.append(cls)
    return cls


def _convert_argument(obj, for_c):
    """Bridge hook for argument types the C fast path does not know.

    Returns what to pass instead, ``obj`` itself for an opaque object, or
    NotImplemented when the type is not supported.
    """
    if isinstance(obj, np.generic):
        if isinstance(obj, np.bool_):
            return bool(obj)
        if isinstance(obj, np.integer):
            return int(obj)
        if isinstance(obj, np.floating):
            return float(obj)
        return NotImplemented
    if isinstance(obj, Array):
        return tuple(obj) if for_c else obj
    if isinstance(obj, tuple(_opaque_types)):
        return obj
    if isinstance(obj, np.ndarray) and obj.dtype.kind == "U":
        return obj  # a tensor of strings (no DLPack dtype): the VM's string builtins take it
    if hasattr(obj, "__dlpack__") and not isinstance(obj, type):
        if isinstance(obj, np.ndarray) and not (obj.flags.c_contiguous and obj.flags.writeable):
            return array(obj)  # cannot be shared as is: pass a copy
        return from_dlpack(obj)
    if callable(obj):
        return PackedFunc(obj)
    return NotImplemented


# Who registered each global function, recorded at registration (see global_func_origin).
BUILTIN, INTERNAL, USER = "builtin", "internal", "user"
_ORIGIN = {}
# The C builtins, registered by the native library before any Python code ran.
_NATIVE_BUILTINS = frozenset(_bridge.func_list_global_names())


def _registering_module():
    """The ``__name__`` of the module whose code called into this module's registration."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__") == __name__:
        frame = frame.f_back
    return "" if frame is None else frame.f_globals.get("__name__", "")


def _origin_of_caller():
    module = _registering_module()
    return INTERNAL if module == "rvm" or module.startswith("rvm.") else USER


def global_func_origin(name):
    """Who registered global function ``name``: ``"builtin"`` (a VM builtin, see
    ``register_builtin``), ``"internal"`` (other code of the rvm package: compiler,
    codegens, tools) or ``"user"`` (code outside rvm, C libraries loaded by the user
    included); None if ``name`` is not registered. Executables loaded from files may call
    builtins and user functions only (rvm.bytecode.callees)."""
    if _bridge.func_get_global(name) is None:
        return None
    origin = _ORIGIN.get(name)
    if origin is None:
        return BUILTIN if name in _NATIVE_BUILTINS else USER
    return origin


def _register(func_name, f, override, origin):
    if not isinstance(func_name, str):
        raise TypeError(
            f"register_func expects a name (str) or a function, got {type(func_name).__name__}")

    def register(fn):
        if not callable(fn):
            raise TypeError(
                f"register_func('{func_name}'): expected a callable, got {type(fn).__name__}")
        _bridge.func_register_global(func_name, fn, bool(override))
        _ORIGIN[func_name] = origin
        return fn

    return register(f) if f is not None else register


def register_builtin(name, f=None):
    """Registers ``f`` as the VM builtin ``name`` (replacing an earlier one): a function
    the VM's own code provides, which executables loaded from files may call. Without
    ``f``, a decorator: ``@register_builtin("vm.builtin.x")``."""
    return _register(name, f, True, BUILTIN)


def register_func(func_name=None, f=None, override=False):
    """Registers a function in the global registry, visible from Python and C.

    Use as ``@register_func`` (the function's name), ``@register_func("name")``
    or ``register_func("name", f, override=True)``. Returns ``f``.

    >>> @register_func("demo.add_one", override=True)
    ... def add_one(x):
    ...     return x + 1
    >>> get_global_func("demo.add_one")(41)
    42
    """
    if callable(func_name) and f is None:
        f, func_name = func_name, func_name.__name__
    return _register(func_name, f, override, _origin_of_caller())


def get_global_func(name, allow_missing=False):
    """The global function ``name``; ValueError (or None with allow_missing) if absent."""
    func = _bridge.func_get_global(name)
    if func is None and not allow_missing:
        close = difflib.get_close_matches(name, _bridge.func_list_global_names(), n=3)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise ValueError(f"global function '{name}' is not registered{hint}")
    return func


def list_global_func_names():
    """Sorted names of every registered global function."""
    return sorted(_bridge.func_list_global_names())


def remove_global_func(name):
    """Removes a global function; ValueError if it does not exist."""
    _bridge.func_remove_global(name)
    _ORIGIN.pop(name, None)


_bridge._set_hooks(
    ndarray_type=NDArray,
    shape_tuple_type=ShapeTuple,
    datatype_type=DataType,
    device_type=Device,
    make_array=Array,
    make_dtype=DataType.from_dlpack,
    make_device=Device,
    fallback=_convert_argument,
    error_type=RVMError,
)
