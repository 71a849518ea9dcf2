"""Loading saved C kernel libraries with rvm's compiler: kernels regenerated from their TIR.

Importing this module (``import rvm`` does) registers ``load_c_kernels`` as the loader
of module type ``c_kernels`` in place of the runtime's own, which can only compile
the stored C of a file the caller trusts and otherwise refuses. The code generator
is imported when a library is loaded, so ``import rvm`` stays free of the compiler; a
runtime-only install (no ``rvm.codegen``) keeps the runtime's refusal and its reason.
"""
from rvm.runtime.compiler import default_compiler
from rvm.runtime.kernel_library import (
    KernelLibrary, kernel_symbol, load_kernel_library, parse_saved_library,
)
from rvm.runtime.module import register_module_loader


def _regenerate(tir, compiler):
    from rvm.codegen.c.target import regenerate_c

    return regenerate_c(tir, compiler)


def load_c_kernels(data, compiler=None, trust_native=False):
    """A KernelLibrary from bytes of ``KernelLibrary.save_to_bytes``, its kernels
    regenerated from the stored TIR (see ``rvm.codegen.c.target.regenerate_c``).

    With ``trust_native=True``, or for hand-written C (no TIR), the runtime's loader
    decides (``rvm.runtime.kernel_library.load_kernel_library``). The header's function
    table must be the kernels the TIR defines; the regenerated source compiles under
    the compiler's limits (it is shaped by the file); the library records the
    registered functions its kernels call (``packed_callees``), which the executable's
    loader checks against the globals the file may call.
    """
    _, _, functions, tir = parse_saved_library(data)
    if trust_native or tir is None:
        return load_kernel_library(data, compiler, trust_native)
    compiler = compiler or default_compiler()
    try:
        source, names, use_openmp, callees = _regenerate(tir, compiler)
    except ImportError:  # no code generator installed: the runtime's refusal says why
        return load_kernel_library(data, compiler, trust_native)
    except Exception as err:  # any defect of untrusted TIR is a load error, never a crash
        raise ValueError(f"kernel library: cannot regenerate its kernels from the stored "
                         f"TensorIR: {type(err).__name__}: {err}") from None
    expected = {name: kernel_symbol(name) for name in names}
    if functions != expected:
        def text(table):
            return ", ".join(f"'{k}' -> '{v}'" for k, v in sorted(table.items())) or "nothing"
        raise ValueError(f"kernel library header maps {text(functions)}, but its TensorIR "
                         f"defines {text(expected)}; refusing the mismatched symbols")
    library = KernelLibrary.from_source(source, expected, compiler, use_openmp, tir=tir,
                                        untrusted=True)
    library.packed_callees = tuple(callees)
    return library


register_module_loader(KernelLibrary.type_key, load_c_kernels, takes_trust=True)
