"""Loading shared libraries whose functions register themselves (RVM_REGISTER_GLOBAL)."""
import os

from rvm.runtime._ffi import _bridge


def load_library(path):
    """Loads a shared library built against c_runtime_api.h; its global functions become visible.

    Raises OSError if the library cannot be loaded and ValueError if one of its
    registrations clashes with an existing name.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise OSError(f"cannot load library '{path}': no such file")
    _bridge.load_library(os.path.abspath(path))
