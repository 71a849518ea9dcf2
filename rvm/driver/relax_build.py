"""relax.build: an IRModule of Relax functions and PrimFuncs -> a bytecode Executable.

The steps, in order:

1. ``params`` given: ``BindParams("main", params)`` turns them into constants;
2. the lowering pipeline (``pipeline``: a registered name, a Pass, or None
   for a module that is already lowered) brings every Relax function to the
   form the VM codegen takes: non-dataflow bindings of calls to extern
   functions, kernels and Relax functions, explicit allocation, shape checks
   as builtin calls;
3. the PrimFuncs are compiled into one kernel library for ``target``
   ("c", or "python" for the reference kernels), attached to the executable
   and searched first when the VM resolves a callee;
4. the runtime modules of the module attribute ``"external_mods"`` (what
   RunCodegen's codegens made) are imported into the executable;
5. every Relax function is emitted as a VM function.

>>> import numpy as np
>>> from rvm.relax.binding import SeqExpr
>>> from rvm.relax.expr import Var
>>> from rvm.relax.function import Function
>>> from rvm.relax.struct_info import TensorStructInfo
>>> from rvm.vm.machine import VirtualMachine
>>> x = Var("x", TensorStructInfo((2,), "float32"))
>>> main = Function([x], SeqExpr([], x), attrs={"global_symbol": "main"})
>>> ex = build(IRModule({"main": main}))
>>> VirtualMachine(ex)["main"](np.ones(2, "float32")).numpy()
array([1., 1.], dtype=float32)
>>> try:
...     VirtualMachine(ex)["main"](np.ones(3, "float32"))
... except ValueError as err:
...     print(err)
main: parameter 'x' expects float32[2]: dimension 0 expected 2, got 3 (shape [3])
"""
from rvm.bytecode.builder import ExecBuilder
from rvm.codegen import byoc as _byoc  # noqa: F401  (registers the example codegens)
from rvm.codegen.vm.codegen import vm_codegen
from rvm.driver.build_module import build_kernels
from rvm.ir.module import IRModule
from rvm.relax.function import Function
from rvm.support.recursion import deep_recursion
from rvm.target.target import as_target
from rvm.tir.function import PrimFunc
from rvm.ir.transform import Pass, get_pipeline

__all__ = ["build", "lower"]


def _as_module(mod):
    if isinstance(mod, Function):
        return IRModule.from_expr(mod)
    if not isinstance(mod, IRModule):
        raise TypeError(f"relax.build expects an IRModule or a relax Function, got "
                        f"{type(mod).__name__}")
    return mod


def lower(mod, params=None, pipeline="default", default_schedule=True):
    """``mod`` after binding ``params`` to ``main`` and running ``pipeline`` (None: as is);
    ``default_schedule=False`` asks a named pipeline to leave out DefaultCPUSchedule."""
    mod = _as_module(mod)
    if params:
        from rvm.relax.transform.bind_params import BindParams

        mod = BindParams("main", params)(mod)
    if not default_schedule and (pipeline is None or isinstance(pipeline, Pass)):
        raise ValueError(f"relax.build: default_schedule=False applies to a named pipeline, "
                         f"got pipeline={pipeline!r} (a Pass runs as given)")
    if pipeline is None:
        return mod
    if not isinstance(pipeline, Pass):
        from rvm.relax.transform.pipeline import default_build_pipeline  # noqa: F401  (registers)

        options = {} if default_schedule else {"default_schedule": False}
        try:
            pipeline = get_pipeline(pipeline, **options)
        except TypeError as err:
            raise ValueError(f"relax.build: pipeline {pipeline!r} takes no default_schedule "
                             f"option ({err})") from None
    return pipeline(mod)


def _check_functions(mod):
    for gv, func in mod.functions.items():
        if not isinstance(func, (Function, PrimFunc)):
            raise TypeError(f"relax.build: function '{gv.name_hint}' is a "
                            f"{type(func).__name__}; expected Relax functions and PrimFuncs")


def _check_offloaded(mod):
    for gv, func in mod.functions.items():
        codegen = func.get_attr("Codegen") if isinstance(func, Function) else None
        if codegen:
            raise ValueError(f"relax.build: function '{gv.name_hint}' is marked for codegen "
                             f"'{codegen}'; run relax.transform.RunCodegen() before building")


def _external_modules(*mods):
    """The runtime modules in the ``external_mods`` attribute of ``mods``, each once."""
    out = []
    for mod in mods:
        if not isinstance(mod, IRModule):
            continue
        for module in mod.get_attr("external_mods") or ():
            if all(module is not m for m in out):
                out.append(module)
    return out


EXEC_MODES = ("bytecode", "compiled")


def _tvm_options(pipeline, relax_pipeline, tir_pipeline, exec_mode):
    """The pipeline, after checking the options TVM's relax.build takes."""
    if relax_pipeline is not None:
        if pipeline != "default":
            raise ValueError("relax.build: pass either pipeline= or relax_pipeline=, not both")
        pipeline = relax_pipeline
    if tir_pipeline not in ("default", None):
        raise ValueError(f"relax.build: tir_pipeline must be 'default' (kernels are lowered by "
                         f"rvm's own TIR pipeline), got {tir_pipeline!r}")
    if exec_mode not in EXEC_MODES:
        raise ValueError(f"relax.build: exec_mode must be one of {EXEC_MODES}, got "
                         f"{exec_mode!r}")
    return pipeline


def build(mod, target="c", params=None, pipeline="default", compiler=None, *,
          relax_pipeline=None, tir_pipeline="default", exec_mode="bytecode", system_lib=None,
          default_schedule=True):
    """Compiles ``mod`` into an Executable carrying its kernel library.

    ``target`` selects the kernel backend ("c", the default; "python" for the
    reference kernels; "llvm" is read as "c"); a Target or None (the current
    Target, else "c") works too. A CPU target's ``-mcpu``/``-mattr`` become the C
    compiler's flags and the default schedules' vector width, its ``-num-cores``
    their cores and the most threads the kernels' parallel loops use. ``params`` maps parameter names of ``main``
    to arrays bound as constants before lowering. ``pipeline`` (TVM's
    ``relax_pipeline``) is the lowering pipeline's name, a Pass, or None for a
    module already in lowered form. ``compiler`` overrides the C compiler.
    ``default_schedule`` (on by default) gives every kernel without a schedule
    of its own (a tuning record applied by MetaScheduleApplyDatabase keeps
    its) the rule-based CPU schedule of ``rvm.dlight``; False builds the
    naive loop nests.

    TVM's ``exec_mode`` is accepted: "bytecode" and "compiled" give the same
    executable, whose bytecode the native engine interprets in C.
    ``tir_pipeline`` must be "default", and ``system_lib`` is accepted and
    unused (an executable is one self-contained file).
    """
    pipeline = _tvm_options(pipeline, relax_pipeline, tir_pipeline, exec_mode)
    target = as_target(target)
    mod = _as_module(mod)
    _check_offloaded(mod)
    with deep_recursion():
        with target:  # the default schedules read its vector width and cores
            lowered = lower(mod, params, pipeline, default_schedule)
        _check_functions(lowered)
        ib = ExecBuilder()
        kernels = build_kernels(lowered, target=target, compiler=compiler)
        if kernels is not None:
            ib.add_kernel_library(kernels)
        for module in _external_modules(mod, lowered):
            ib.import_module(module)
        vm_codegen(lowered, ib)
        return ib.get()
