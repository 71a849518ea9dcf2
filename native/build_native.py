"""cffi build script for the native runtime (run by setup.py at install).

The extension `rvm.runtime._native` contains the whole C runtime of
native/src: the packed calling convention, the global registry, tensors, the
CPython bridge and the VM engine. Its public C API is
rvm/include/rvm/c_runtime_api.h, inside the package: the headers are package
data, installed with it for C sources users compile against the runtime.

Before compiling, it generates native/generated/rvm_vm_contract.h from the VM
contract, rvm/bytecode/contract.py (opcodes, the linked form, shape codes, the
C builtins), so the C engine reads the numbers and names the Python side
defines.
"""
import importlib.util
import pathlib

from cffi import FFI

ROOT = pathlib.Path(__file__).resolve().parent
GENERATED = ROOT / "generated"
INCLUDE = ROOT.parent / "rvm" / "include"


def _write_contract_header():
    """native/vm_contract_header.py, loaded from its file, writes the header; its path."""
    spec = importlib.util.spec_from_file_location("vm_contract_header",
                                                  ROOT / "vm_contract_header.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.write_contract_header(), [module.CONTRACT, module.DTYPE_TABLE]


HEADER, CONTRACTS = _write_contract_header()
SOURCES = sorted(str(p.relative_to(ROOT.parent)) for p in (ROOT / "src").glob("*.c"))
DEPENDS = sorted(str(p.relative_to(ROOT.parent))
                 for p in [*(ROOT / "src").glob("*.h"), *INCLUDE.rglob("*.h"), HEADER,
                           *CONTRACTS])

ffibuilder = FFI()
# Only what Python calls through cffi; everything else goes through the bridge.
ffibuilder.cdef(
    """
    int rvm_bridge_install(const char* module_name);
    const char* RVMGetLastError(void);
    int RVMBackendGetNumThreads(void);
    int RVMBackendSetNumThreads(int n);
    """
)
ffibuilder.set_source(
    "rvm.runtime._native",
    """
    #include "rvm/c_runtime_api.h"
    int rvm_bridge_install(const char* module_name);
    """,
    sources=SOURCES,
    depends=DEPENDS,
    include_dirs=[str(p.relative_to(ROOT.parent))
                  for p in (INCLUDE, ROOT / "src", GENERATED)],
    extra_compile_args=["-O2", "-std=gnu11", "-fvisibility=hidden", "-Wall",
                        "-Wno-unused-parameter"],
    libraries=["dl", "pthread"],
    py_limited_api=False,
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
