"""Loads the native runtime and its CPython bridge.

The extension `rvm.runtime._native` (built by cffi from native/) is made
globally visible so that libraries loaded later (user C code, compiled
kernels) resolve the C API (RVMFuncGetGlobal, ...) against this very copy of
the runtime: one registry for all.
"""
import ctypes
import os

from rvm.runtime import _native

ffi = _native.ffi
lib = _native.lib

ctypes.CDLL(_native.__file__, mode=os.RTLD_GLOBAL | getattr(os, "RTLD_NOLOAD", 0))

if lib.rvm_bridge_install(b"rvm.runtime._bridge") != 0:
    raise ImportError("rvm: the native runtime bridge failed to initialise")

from rvm.runtime import _bridge  # noqa: E402  (exists only after rvm_bridge_install)

__all__ = ["ffi", "lib", "_bridge", "native_library_path"]


def native_library_path():
    """Path of the shared object holding the C runtime (to link or dlopen against)."""
    return _native.__file__
