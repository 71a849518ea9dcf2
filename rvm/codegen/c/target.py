"""The "c" target: lowered PrimFuncs -> one C translation unit -> a KernelLibrary."""
from rvm.codegen.c.polls import NUM_CORES_ATTR
from rvm.codegen.c.source import render_c_source
from rvm.codegen.c.kernel_signature import kernel_functions
from rvm.runtime.compiler import default_compiler
from rvm.runtime.kernel_library import KernelLibrary
from rvm.runtime.threads import MAX_THREADS
from rvm.target.target import as_target
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


def with_num_cores(funcs, num_cores):
    """``funcs`` ((name, PrimFunc) pairs) with ``NUM_CORES_ATTR`` set to ``num_cores`` (the
    most threads their parallel loops use; the saved TIR keeps it), or as they are for
    None."""
    if num_cores is None:
        return funcs
    if isinstance(num_cores, bool) or not isinstance(num_cores, int) \
            or not 1 <= num_cores <= MAX_THREADS:
        raise ValueError(f"target attribute 'num-cores' expects 1 to {MAX_THREADS} cores, got "
                         f"{num_cores!r}")
    return [(name, func.with_attr(NUM_CORES_ATTR, num_cores)) for name, func in funcs]


def build_c(mod, compiler=None, target=None):
    """Compiles the lowered PrimFuncs of ``mod`` into a KernelLibrary (through the disk cache)
    for ``target`` (a CPU Target, None for the host): its ``-mcpu``/``-mattr`` are the
    compiler's CPU flags, its ``-num-cores`` caps the threads of parallel loops.

    The library keeps the serialized lowered TIR, from which loading regenerates it.
    """
    compiler = compiler or default_compiler()
    target = as_target(target)
    funcs = with_num_cores(kernel_functions(mod), target.num_cores)
    use_openmp = any(_has_parallel_loop(f) for _, f in funcs) and compiler.openmp
    source = render_c_source(funcs, use_openmp)
    return KernelLibrary.from_source(source, [name for name, _ in funcs], compiler, use_openmp,
                                     tir=save_prim_funcs(funcs),
                                     target_flags=target.compiler_flags())


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
