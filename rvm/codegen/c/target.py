"""The "c" target: lowered PrimFuncs -> one C translation unit -> a KernelLibrary."""
from rvm.codegen.c.source import render_c_source
from rvm.codegen.c.kernel_signature import kernel_functions
from rvm.runtime.compiler import default_compiler
from rvm.runtime.kernel_library import KernelLibrary
from rvm.support.recursion import deep_recursion
from rvm.tir.analysis.verify_untrusted import verify_untrusted
from rvm.tir.serialize import load_prim_funcs, save_prim_funcs
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
    """Compiles the lowered PrimFuncs of ``mod`` into a KernelLibrary (through the disk cache).

    The library keeps the serialized lowered TIR, from which loading regenerates it.
    """
    compiler = compiler or default_compiler()
    source, names, use_openmp = kernel_source(mod, compiler)
    tir = save_prim_funcs(kernel_functions(mod))
    return KernelLibrary.from_source(source, names, compiler, use_openmp, tir=tir)


def _packed_callees(funcs):
    """Sorted names of the registered functions the kernels call (``T.call_packed``)."""
    found = set()

    def visit(node):
        if getattr(node, "op", None) == "tir.call_packed" and node.args \
                and isinstance(getattr(node.args[0], "value", None), str):
            found.add(node.args[0].value)

    for _, func in funcs:
        post_order_visit(func.body, visit)
    return sorted(found)


def regenerate_c(tir, compiler):
    """(C source, kernel names, use_openmp, packed callee names) of serialized lowered TIR
    from an untrusted file.

    The TIR is first checked by ``verify_untrusted`` (typed lets and casts, one dtype per
    memory, scopes, no nodes shared between kernels, bounded unrolling; the decoder has
    already bounded its expanded size and depth). The code generator then runs in safe
    mode: accesses proven in bounds or guarded, calls only to intrinsics and registered
    packed functions (the names returned, which the loader checks against the globals the
    file may call).
    """
    funcs = load_prim_funcs(tir)
    with deep_recursion():  # the decoder capped the depth (serialize.MAX_DEPTH)
        verify_untrusted(funcs)  # iterative, but its messages print the offending node
        use_openmp = any(_has_parallel_loop(f) for _, f in funcs) and compiler.openmp
        source = render_c_source(funcs, use_openmp, safe=True)
        callees = _packed_callees(funcs)
    return source, [name for name, _ in funcs], use_openmp, callees
