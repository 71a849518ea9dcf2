"""Tuning TensorIR kernels: ``tune_tir`` and ``compile_tir`` (TVM's ``ms.tir_integration``).

A kernel whose inputs include constants at every call (weights the model binds) says
which in its ``layout_free_buffers`` attribute, a list of parameter positions (TVM's
attribute; ``relax.build`` sets it on the kernels it builds, see
``relax.transform.AttachAttrLayoutFreeBuffers``). ``tune_tir`` then tunes the kernel
as the build will run it: the default seed is scheduled knowing those inputs are
constants (it may pack a weight into panels) and every candidate that packs one is
timed with the packing done once, as the build does it for a bound weight
(``layout_preproc``), so a tuned kernel is never judged on a cost the build does not
pay. The workload recorded is the kernel without the attribute: ``compile_tir`` finds
it either way, and ``tune_relax`` shares the records.

>>> # database = ms.tune_tir(mod=MyModule, target="llvm --num-cores=1", max_trials_global=64,
>>> #                        num_trials_per_iter=64, work_dir="./tune_tmp", task_name="main")
>>> # sch = ms.tir_integration.compile_tir(database, MyModule, "llvm --num-cores=1")
"""
import warnings

from rvm.ir.module import IRModule
from rvm.meta_schedule.arg_info import entry_prim_func
from rvm.meta_schedule.database.workload import workload_module
from rvm.meta_schedule.layout_preproc import unmark_layout_free
from rvm.meta_schedule.tune_target import tune_target
from rvm.meta_schedule.tune import tune_tasks
from rvm.meta_schedule.tune_context import TuneContext
from rvm.tir.function import PrimFunc


def _prim_funcs(mod):
    if isinstance(mod, PrimFunc):
        return [("main", mod)]
    if not isinstance(mod, IRModule):
        raise TypeError(f"tune_tir expects an IRModule or a PrimFunc, got {type(mod).__name__}")
    funcs = [(gv.name_hint, f) for gv, f in mod.functions.items() if isinstance(f, PrimFunc)]
    if not funcs:
        raise ValueError("tune_tir: the module has no PrimFunc to tune")
    return funcs


def tune_tir(mod, target, work_dir, max_trials_global, *, max_trials_per_task=None,
             num_trials_per_iter=64, builder="local", runner="local", database="json",
             cost_model="gbt", measure_callbacks=None, task_scheduler="round-robin",
             space="post-order-apply", strategy="evolutionary", num_tuning_cores="physical",
             seed=None, module_equality="structural", task_name="main", progress=None):
    """Tunes every PrimFunc of ``mod`` (one task each; a lone one is named ``task_name``)
    and returns the database. ``space`` is the default space, a function of a Schedule
    (``ms.space_generator.ScheduleFn``) or a SpaceGenerator; ``strategy`` is
    "evolutionary", "replay-trace" or a SearchStrategy. Records stay in ``work_dir``: a
    second call resumes, measuring only candidates not recorded yet. A kernel's
    ``layout_free_buffers`` attribute names its inputs that are constants at every call
    (module docstring)."""
    funcs = _prim_funcs(mod)
    target = tune_target(target)
    seed = -1 if seed is None else int(seed)
    tasks = []
    for k, (name, func) in enumerate(funcs):
        workload, layout_free = unmark_layout_free(func)
        tasks.append(TuneContext(
            workload, target=target, space_generator=space, search_strategy=strategy,
            task_name=task_name if len(funcs) == 1 else name,
            rand_state=seed if seed == -1 else seed + k, layout_free=layout_free))
    return tune_tasks(tasks=tasks, task_weights=[1.0] * len(tasks), work_dir=work_dir,
                      max_trials_global=max_trials_global,
                      max_trials_per_task=max_trials_per_task,
                      num_trials_per_iter=num_trials_per_iter, builder=builder, runner=runner,
                      database=database, cost_model=cost_model,
                      measure_callbacks=measure_callbacks, task_scheduler=task_scheduler,
                      module_equality=module_equality, progress=progress)


def compile_tir(database, mod, target):
    """The best Schedule recorded for ``mod``'s (only, or "main") PrimFunc, or None (with a
    warning) when the database has no successful record of it. ``sch.mod["main"]`` is the
    tuned kernel."""
    tune_target(target)
    workload = workload_module(unmark_layout_free(entry_prim_func(mod))[0])
    sch = database.query_schedule(workload, target, workload_name="main")
    if sch is None:
        warnings.warn("compile_tir: the database has no successful tuning record of this "
                      "kernel; tune it first (ms.tune_tir)", RuntimeWarning, stacklevel=2)
    return sch
