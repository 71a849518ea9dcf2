"""cffi build script for the native runtime (run by setup.py at install).

The extension `rvm.runtime._native` contains the whole C runtime of
native/src: the packed calling convention, the global registry, tensors and
the CPython bridge. Its public C API is native/include/rvm/c_runtime_api.h.
"""
import pathlib

from cffi import FFI

ROOT = pathlib.Path(__file__).resolve().parent
SOURCES = sorted(str(p.relative_to(ROOT.parent)) for p in (ROOT / "src").glob("*.c"))

ffibuilder = FFI()
# Only what Python calls through cffi; everything else goes through the bridge.
ffibuilder.cdef(
    """
    int rvm_bridge_install(const char* module_name);
    const char* RVMGetLastError(void);
    """
)
ffibuilder.set_source(
    "rvm.runtime._native",
    """
    #include "rvm/c_runtime_api.h"
    int rvm_bridge_install(const char* module_name);
    """,
    sources=SOURCES,
    include_dirs=[str((ROOT / "include").relative_to(ROOT.parent)), str((ROOT / "src").relative_to(ROOT.parent))],
    extra_compile_args=["-O2", "-std=gnu11", "-fvisibility=hidden", "-Wall", "-Wno-unused-parameter"],
    libraries=["dl", "pthread"],
    py_limited_api=False,
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
