"""rvm.build: PrimFuncs -> a runtime Module of kernels (compiled C, or the python reference).

>>> # lib = rvm.build(te.create_prim_func([A, B, C]), target="c")
>>> # lib["main"](a, b, c); lib.time_evaluator("main", rvm.cpu())(a, b, c).mean
"""
import warnings

from rvm.codegen.c.target import build_c
from rvm.codegen.python.kernels import build_python
from rvm.ir.module import IRModule
from rvm.runtime.compiler import CompilerNotFoundError
from rvm.support.recursion import deep_recursion
from rvm.target.target import as_target
from rvm.tir.function import PrimFunc
from rvm.tir.transform.pipeline import lower_module

def normalize_target(target):
    """The kernel backend of ``target`` (a str, dict, Target, or None for the current target,
    else "c"): "python" for the reference kernels, else "c" ("llvm" targets are compiled C)."""
    return "python" if as_target(target).kind.name == "python" else "c"


def _prim_func_module(mod, name):
    if isinstance(mod, PrimFunc):
        return IRModule.from_expr(mod, name)
    if not isinstance(mod, IRModule):
        raise TypeError(f"rvm.build expects a PrimFunc or an IRModule, got {type(mod).__name__}")
    others = [gv.name_hint for gv, f in mod.functions.items() if not isinstance(f, PrimFunc)]
    if others:
        raise ValueError(f"rvm.build compiles PrimFuncs only; the module also has "
                         f"{', '.join(others)} (use relax.build for Relax functions)")
    return mod


def build_kernels(mod, target="c", compiler=None):
    """The kernel Module of the PrimFuncs of ``mod``, which may also hold Relax functions.

    For relax.build: returns None when the module has no PrimFunc. The
    kernels keep their GlobalVar names, which call_tir refers to.
    """
    prims = {gv: f for gv, f in mod.functions.items() if isinstance(f, PrimFunc)}
    if not prims:
        return None
    return build(IRModule(prims, mod.attrs), target, compiler=compiler)


def build(mod, target="c", name=None, compiler=None):
    """Lowers and compiles every PrimFunc of ``mod`` (an IRModule or one PrimFunc).

    Returns a runtime Module whose functions are the kernels, named after
    their GlobalVars (a lone PrimFunc is named ``name``, else its
    ``global_symbol``, else "main"): a KernelLibrary ("c_kernels") for target
    "c", a PythonKernelLibrary ("python_kernels") for target "python". With
    no C compiler installed, target "c" falls back to "python" with a warning.
    """
    target = as_target(target)
    with deep_recursion():
        lowered = lower_module(_prim_func_module(mod, name))
        if target.kind.name == "python":
            return build_python(lowered)
        try:
            return build_c(lowered, compiler, target)
        except CompilerNotFoundError as err:
            warnings.warn(f"{err}; running kernels with the python reference target instead",
                          RuntimeWarning, stacklevel=2)
            return build_python(lowered)
