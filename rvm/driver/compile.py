"""rvm.compile: TVM's one entry point for both kinds of modules.

A module with Relax functions goes through ``relax.build`` (an Executable for
the VirtualMachine); a module of PrimFuncs alone through ``rvm.build`` (a
runtime Module of kernels).

>>> from rvm import te
>>> A = te.placeholder((4,), name="A")
>>> B = te.compute((4,), lambda i: A[i] + 1.0, name="B")
>>> type(compile(te.create_prim_func([A, B]), target="python")).__name__
'PythonKernelLibrary'
"""
from rvm.driver.build_module import build as build_kernels
from rvm.driver.relax_build import build as build_relax
from rvm.ir.module import IRModule
from rvm.relax.function import Function
from rvm.tir.function import PrimFunc


def compile(mod, target=None, *, relax_pipeline="default", tir_pipeline="default",
            exec_mode="bytecode", system_lib=None):  # noqa: A001 (TVM's name)
    """Builds ``mod`` (an IRModule, a relax Function or a PrimFunc) for ``target``."""
    if isinstance(mod, PrimFunc) or isinstance(mod, IRModule) and all(
            isinstance(f, PrimFunc) for f in mod.functions.values()) and len(mod):
        if tir_pipeline not in ("default", None):
            raise ValueError(f"compile: tir_pipeline must be 'default', got {tir_pipeline!r}")
        return build_kernels(mod, target)
    if not isinstance(mod, (IRModule, Function)):
        raise TypeError(f"compile expects an IRModule, a relax Function or a PrimFunc, got "
                        f"{type(mod).__name__}")
    return build_relax(mod, target, relax_pipeline=relax_pipeline, tir_pipeline=tir_pipeline,
                       exec_mode=exec_mode, system_lib=system_lib)
