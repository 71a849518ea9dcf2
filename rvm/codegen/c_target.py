"""The "c" target: lowered PrimFuncs -> one C translation unit -> a KernelLibrary."""
from rvm.codegen.c_source import render_c_source
from rvm.codegen.kernel_signature import kernel_functions
from rvm.runtime.compiler import default_compiler
from rvm.runtime.kernel_library import KernelLibrary
from rvm.tir.stmt import ForKind
from rvm.tir.stmt_functor import post_order_visit


def _has_parallel_loop(func):
    found = []
    post_order_visit(func.body, lambda n: found.append(n) if getattr(n, "kind", None)
                     == ForKind.PARALLEL else None)
    return bool(found)


def render_c(mod, use_openmp=True):
    """The C source of the lowered PrimFuncs of ``mod`` (OpenMP pragmas only if asked)."""
    return render_c_source(kernel_functions(mod), use_openmp)


def kernel_source(mod, compiler=None):
    """(C source, kernel names, use_openmp) of the lowered PrimFuncs of ``mod``.

    OpenMP is used when some kernel has a parallel loop and the compiler supports it.
    """
    compiler = compiler or default_compiler()
    funcs = kernel_functions(mod)
    use_openmp = any(_has_parallel_loop(f) for _, f in funcs) and compiler.openmp
    return render_c_source(funcs, use_openmp), [name for name, _ in funcs], use_openmp


def build_c(mod, compiler=None):
    """Compiles the lowered PrimFuncs of ``mod`` into a KernelLibrary (through the disk cache)."""
    compiler = compiler or default_compiler()
    source, names, use_openmp = kernel_source(mod, compiler)
    return KernelLibrary.from_source(source, names, compiler, use_openmp)
