"""Tuning the kernels of a Relax model (TVM's ``ms.relax_integration``).

>>> # ms.relax_integration.tune_relax(mod, params={}, target="c", work_dir="./tune_tmp",
>>> #                                 max_trials_global=256)
>>> # mod = relax.transform.MetaScheduleApplyDatabase("./tune_tmp")(mod)

``extract_tasks`` finds the kernels (deduplicated by structural hash,
weighted by call count), ``tune_relax`` tunes them together (each task's
default schedule measured first, then the trials split by each task's share
of the model's time; records of a ``work_dir`` already tuned, at another
batch size say, count for the kernels whose shapes match), and
``compile_relax`` builds the module with the best records applied.

Kernels are measured on concrete inputs, so a kernel with symbolic shapes (a model
imported with a symbolic batch) is not tuned: ``tune_relax`` warns, naming them. Bind
the symbolic variables first, once per shape to tune for (TVM's way), and apply the
records to the module so bound:

>>> # mod = relax.transform.BindSymbolicVars({"batch": 8})(mod)
>>> # ms.relax_integration.tune_relax(mod, {}, "c", "./tune_tmp", max_trials_global=256)
"""
import warnings

from rvm.meta_schedule.apply_database import apply_database
from rvm.meta_schedule.extracted_task import ExtractedTask, extract_tasks
from rvm.meta_schedule.tune_target import tune_target
from rvm.relax.transform.bind_params import BindParams
from rvm.meta_schedule.tune import tune_tasks
from rvm.meta_schedule.tune_context import TuneContext

__all__ = ["ExtractedTask", "compile_relax", "extract_tasks", "tune_relax"]


def tune_relax(mod, params, target, work_dir, max_trials_global, *, max_trials_per_task=None,
               num_trials_per_iter=64, builder="local", runner="local", database="json",
               cost_model="gbt", measure_callbacks=None, task_scheduler="gradient",
               space="post-order-apply", strategy="evolutionary", seed=None,
               module_equality="structural", progress=None):
    """Tunes every kernel of ``mod`` (``params`` bound to "main" first) and returns the
    database kept in ``work_dir``; warns about the kernels it cannot tune (symbolic
    shapes, scalar parameters: module docstring)."""
    target = tune_target(target)
    tasks = extract_tasks(mod, target, params, module_equality)
    if tasks.skipped:
        names = ", ".join(name for name, _ in tasks.skipped[:4])
        names += f" and {len(tasks.skipped) - 4} more" if len(tasks.skipped) > 4 else ""
        warnings.warn(f"tune_relax: {len(tasks.skipped)} kernel(s) not tuned: {names}: "
                      f"{tasks.skipped[0][1]}; bind the model's symbolic variables "
                      "(relax.transform.BindSymbolicVars) to tune them", RuntimeWarning,
                      stacklevel=2)
    seed = -1 if seed is None else int(seed)
    contexts = [TuneContext(task.mod, target=target, space_generator=space,
                            search_strategy=strategy, task_name=task.task_name,
                            rand_state=seed if seed == -1 else seed + k,
                            layout_free=task.layout_free)
                for k, task in enumerate(tasks)]
    database = tune_tasks(tasks=contexts, task_weights=[t.weight for t in tasks],
                          work_dir=work_dir, max_trials_global=max_trials_global,
                          max_trials_per_task=max_trials_per_task,
                          num_trials_per_iter=num_trials_per_iter, builder=builder,
                          runner=runner, database=database, cost_model=cost_model,
                          measure_callbacks=measure_callbacks, task_scheduler=task_scheduler,
                          module_equality=module_equality, progress=progress)
    return database


def compile_relax(database, mod, target, params=None, enable_warning=False):
    """``relax.build`` of ``mod`` with the database's best kernels swapped in."""
    from rvm.driver.relax_build import build

    if params:
        mod = BindParams("main", params)(mod)
    tuned = apply_database(mod, database, target, enable_warning)
    return build(tuned, target=tune_target(target))
