"""C-source runtime modules: C code a BYOC codegen wrote, compiled against rvm's runtime header.

``csource_module_create(source, "c", func_names)`` compiles ``source`` with
the kernels' compiler and disk cache, the package's headers on the include path
(``find_include_path()``: ``<rvm/c_runtime_api.h>``, and at TVM's paths
``<rvm/runtime/c_runtime_api.h>``, ``<rvm/runtime/packed_func.h>``,
``<dlpack/dlpack.h>``); each name in ``func_names`` is an exported packed
function of that name. Format ``"cc"`` compiles the source as C++; without
``func_names`` the functions are those the source exports with
``RVM_DLL_EXPORT_TYPED_FUNC(name, ...)``. It is also the global function
``module.csource_module_create``, as in TVM. The module saves its source
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
import re

from rvm.runtime.compiler import default_compiler
from rvm.runtime.kernel_library import KernelLibrary, _refuse_native, parse_saved_library
from rvm.runtime.module import register_module_loader
from rvm.runtime.packed_func import register_func

# format -> the language the compiler compiles it as
FORMATS = {"c": "c", "cc": "c++"}
_EXPORTED = re.compile(r"^\s*RVM_DLL_EXPORT_TYPED_FUNC\(\s*([A-Za-z_]\w*)\s*,", re.MULTILINE)


def runtime_include_dir():
    """The directory of rvm's C headers, installed with the package (``rvm/include``)."""
    root = pathlib.Path(__file__).resolve().parents[1] / "include"
    if not (root / "rvm" / "c_runtime_api.h").is_file():
        raise FileNotFoundError(f"rvm's runtime header rvm/c_runtime_api.h is missing from the "
                                f"package's include directory {root}; reinstall rvm")
    return root


def find_include_path():
    """The include directories C sources compiled against rvm's runtime need (a list of str,
    as TVM's ``libinfo.find_include_path``): the package's ``include`` directory.

    >>> import pathlib
    >>> [pathlib.Path(p).name for p in find_include_path()]
    ['include']
    """
    return [str(runtime_include_dir())]


class CSourceModule(KernelLibrary):
    """Packed functions compiled from C source against rvm's runtime header (type ``"c"``)."""

    type_key = "c"

    def __init__(self, source, functions, library, compiler, use_openmp=False, fmt="c"):
        super().__init__(source, functions, library, compiler, use_openmp)
        self.format = fmt

    @classmethod
    def from_source(cls, source, functions, compiler=None, use_openmp=False, untrusted=False,
                    fmt="c"):
        """Compiles ``source`` (cached) as format ``fmt`` ("c", or "cc" for C++);
        ``functions`` names its exported packed functions (a list, each its own symbol, or
        a {name: symbol} dict); ``untrusted`` compiles under limits (see Compiler.compile)."""
        if not isinstance(functions, dict):
            functions = {name: name for name in functions}
        compiler = compiler or default_compiler()
        library = compiler.compile(source, use_openmp=use_openmp,
                                   include_dirs=(runtime_include_dir(),), untrusted=untrusted,
                                   language=FORMATS[fmt])
        return cls(source, functions, library, compiler, use_openmp, fmt)

    def get_source(self, fmt="c"):
        """The C (or C++) source of the module."""
        return super().get_source("c" if fmt == self.format else fmt)

    def _saved_header(self):
        return {**super()._saved_header(), "source_format": self.format}

    def __repr__(self):
        return f"<rvm.runtime.CSourceModule: {', '.join(self.functions)}>"


@register_func("module.csource_module_create")
def csource_module_create(source, fmt, func_names=None, const_vars=()):
    """A runtime module of the packed functions ``func_names`` defined by C ``source``.

    ``fmt`` is ``"c"`` or ``"cc"`` (C++). Without ``func_names``, the functions are the
    names the source exports with ``RVM_DLL_EXPORT_TYPED_FUNC``. ``const_vars`` (TVM's
    constants bound by name) must be empty: codegens here put constants in the source.
    """
    if not isinstance(source, str):
        raise TypeError(f"csource_module_create: source must be a str, got "
                        f"{type(source).__name__}")
    if fmt not in FORMATS:
        raise ValueError(f"csource_module_create: format {fmt!r} is not supported; expected "
                         f"one of {tuple(FORMATS)}")
    if func_names is None:
        func_names = _EXPORTED.findall(source)
        if not func_names:
            raise ValueError("csource_module_create: no func_names given and the source "
                             "exports no function with RVM_DLL_EXPORT_TYPED_FUNC(name, ...)")
    names = list(func_names)
    bad = [n for n in names if not isinstance(n, str) or not n.isidentifier()]
    if bad or not names:
        raise ValueError(f"csource_module_create: func_names must be C identifiers, got "
                         f"{names!r}")
    if list(const_vars):
        raise ValueError("csource_module_create: const_vars are not supported; emit constants "
                         "into the source")
    return CSourceModule.from_source(source, names, fmt=fmt)


def load_csource_module(data, compiler=None, trust_native=False):
    """Rebuilds a CSourceModule saved by ``save_to_bytes`` by compiling its stored source.

    Its C is native code from the bytes: refused unless ``trust_native=True``.
    """
    header, source, functions, _ = parse_saved_library(data, "C source module")
    fmt = header.get("source_format", "c")
    if fmt not in FORMATS:
        raise ValueError(f"corrupted C source module: source format {fmt!r} is not one of "
                         f"{tuple(FORMATS)}")
    if not trust_native:
        raise _refuse_native(list(functions), "is a C-source module (hand-written C)")
    return CSourceModule.from_source(source, functions, compiler,
                                     use_openmp=bool(header.get("use_openmp", False)),
                                     untrusted=True, fmt=fmt)


register_module_loader(CSourceModule.type_key, load_csource_module, takes_trust=True)
