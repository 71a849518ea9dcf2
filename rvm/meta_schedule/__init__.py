"""rvm.meta_schedule: tuning kernels by searching their schedules (TVM's ``meta_schedule``).

``from rvm import meta_schedule as ms``:
``ms.tune_tir``/``ms.tir_integration.compile_tir`` for kernels,
``ms.relax_integration.tune_relax`` and ``relax.transform.MetaScheduleApplyDatabase``
for the kernels of a model.

This package is a facade; the definitions live in its modules.
"""
from rvm.meta_schedule import (
    arg_info, builder, cost_model, database, feature_extractor, measure_callback, mutator,
    postproc, relax_integration, runner, schedule_rule, search_strategy, space_generator,
    task_scheduler, tir_integration,
)
from rvm.meta_schedule.arg_info import ArgInfo, TensorInfo
from rvm.meta_schedule.measure_candidate import MeasureCandidate
from rvm.meta_schedule.tune import tune_tasks
from rvm.meta_schedule.tune_context import TuneContext
from rvm.meta_schedule.relax_integration import tune_relax
from rvm.meta_schedule.tir_integration import compile_tir, tune_tir

__all__ = [
    "ArgInfo", "MeasureCandidate", "TensorInfo", "TuneContext", "arg_info", "builder",
    "compile_tir", "cost_model", "database", "feature_extractor", "measure_callback", "mutator",
    "postproc", "relax_integration", "runner", "schedule_rule", "search_strategy",
    "space_generator", "task_scheduler", "tir_integration", "tune_relax", "tune_tasks", "tune_tir",
]
