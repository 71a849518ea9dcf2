"""C-source runtime modules: C code a BYOC codegen wrote, compiled against rvm's runtime header.

``csource_module_create(source, "c", func_names)`` compiles ``source`` with
the kernels' compiler and disk cache, ``native/include`` on the include path
(so it can ``#include <rvm/c_runtime_api.h>``); each name in ``func_names``
is an exported packed function of that name. The module saves its source
into an executable. Its C is hand-written, not regenerated from TIR as a
kernel library's is, so loading refuses it unless the caller passes
``trust_native=True``; then the stored source is compiled again (a cache hit
where it was built). The stored object code is never loaded.

>>> src = '''#include <rvm/c_runtime_api.h>
... RVM_DLL int answer(RVMValue* args, int* codes, int n, RVMValue* ret, int* ret_code,
...                    void* resource) {
...   ret->v_int64 = 42; *ret_code = kRVMInt; return 0;
... }'''
>>> mod = csource_module_create(src, "c", ["answer"])
>>> mod["answer"]()
42
"""
import pathlib

from rvm.runtime.compiler import default_compiler
from rvm.runtime.kernel_library import KernelLibrary, _refuse_native, parse_saved_library
from rvm.runtime.module import register_module_loader

FORMATS = ("c",)


def runtime_include_dir():
    """The directory holding ``rvm/c_runtime_api.h`` (``native/include`` of the source tree)."""
    here = pathlib.Path(__file__).resolve()
    for root in (here.parent / "include", here.parents[2] / "native" / "include"):
        if (root / "rvm" / "c_runtime_api.h").is_file():
            return root
    raise FileNotFoundError("rvm's runtime header rvm/c_runtime_api.h was not found next to "
                            "the package (native/include of the source tree); C-source modules "
                            "need an install from the source tree (pip install -e .)")


class CSourceModule(KernelLibrary):
    """Packed functions compiled from C source against rvm's runtime header (type ``"c"``)."""

    type_key = "c"

    @classmethod
    def from_source(cls, source, functions, compiler=None, use_openmp=False, untrusted=False):
        """Compiles ``source`` (cached); ``functions`` names its exported packed functions
        (a list, each its own symbol, or a {name: symbol} dict); ``untrusted`` compiles
        under limits (see Compiler.compile)."""
        if not isinstance(functions, dict):
            functions = {name: name for name in functions}
        compiler = compiler or default_compiler()
        library = compiler.compile(source, use_openmp=use_openmp,
                                   include_dirs=(runtime_include_dir(),), untrusted=untrusted)
        return cls(source, functions, library, compiler, use_openmp)

    def get_source(self, fmt="c"):
        """The C source of the module."""
        return super().get_source(fmt)

    def __repr__(self):
        return f"<rvm.runtime.CSourceModule: {', '.join(self.functions)}>"


def csource_module_create(source, fmt, func_names, const_vars=()):
    """A runtime module of the packed functions ``func_names`` defined by C ``source``.

    ``fmt`` must be ``"c"``. ``const_vars`` (TVM's constants bound by name) must be
    empty: codegens here put constants in the source.
    """
    if not isinstance(source, str):
        raise TypeError(f"csource_module_create: source must be a str, got "
                        f"{type(source).__name__}")
    if fmt not in FORMATS:
        raise ValueError(f"csource_module_create: format {fmt!r} is not supported; expected "
                         f"one of {FORMATS}")
    names = list(func_names)
    bad = [n for n in names if not isinstance(n, str) or not n.isidentifier()]
    if bad or not names:
        raise ValueError(f"csource_module_create: func_names must be C identifiers, got "
                         f"{names!r}")
    if list(const_vars):
        raise ValueError("csource_module_create: const_vars are not supported; emit constants "
                         "into the source")
    return CSourceModule.from_source(source, names)


def load_csource_module(data, compiler=None, trust_native=False):
    """Rebuilds a CSourceModule saved by ``save_to_bytes`` by compiling its stored source.

    Its C is native code from the bytes: refused unless ``trust_native=True``.
    """
    header, source, functions, _ = parse_saved_library(data, "C source module")
    if not trust_native:
        raise _refuse_native(list(functions), "is a C-source module (hand-written C)")
    return CSourceModule.from_source(source, functions, compiler,
                                     use_openmp=bool(header.get("use_openmp", False)),
                                     untrusted=True)


register_module_loader(CSourceModule.type_key, load_csource_module, takes_trust=True)
