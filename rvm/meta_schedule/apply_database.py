"""MetaScheduleApplyDatabase: the pass that swaps tuned kernels into a Relax module.

Exposed as ``relax.transform.MetaScheduleApplyDatabase(work_dir)``. The
module is first prepared as for tuning (operators legalized into kernels);
then every PrimFunc whose workload has records in the database is replaced
by its best schedule, keeping the function's name and ``global_symbol``, and
marked opaque (``op_pattern``) so the build does not fuse it any further.
Kernels without records stay as they are (``enable_warning`` lists them), and so does a
kernel whose best record no longer replays on it (a trace of primitives that changed
since it was recorded; a RuntimeWarning names it): the build gives both the default
schedule, as to any kernel without a schedule, never the unscheduled loop nest nor the
second best record (which measured slower than the best one, the default kernel perhaps).
"""
import warnings

from rvm.meta_schedule.arg_info import ArgInfo
from rvm.meta_schedule.database.database import Database
from rvm.meta_schedule.database.json_database import JSONDatabase
from rvm.meta_schedule.extracted_task import prepare_for_tuning
from rvm.tir.function import PrimFunc
from rvm.ir.transform import ModulePass, PassInfo


# TVM's kOpaque: the build's fusion passes must not merge a tuned kernel into another.
OPAQUE = 8
# What replaying a trace raises when it does not fit the kernel (ScheduleError is a
# ValueError; an instruction kind this version does not know, a KeyError).
REPLAY_ERRORS = (ValueError, TypeError, IndexError, KeyError, RuntimeError)


def _tuned(func, original):
    attrs = dict(func.attrs)
    symbol = original.get_attr("global_symbol")
    if symbol is None:
        attrs.pop("global_symbol", None)
    else:
        attrs["global_symbol"] = symbol
    attrs["op_pattern"] = OPAQUE
    return func.with_fields(attrs=attrs)


def apply_database(mod, database, target=None, enable_warning=False):
    """``mod`` with every kernel that has records replaced by its best schedule."""
    prepared = prepare_for_tuning(mod)
    result = prepared.copy()
    missing, unreplayed = [], []
    for gv, func in prepared.functions.items():
        if not isinstance(func, PrimFunc):
            continue
        try:
            ArgInfo.from_prim_func(func)
        except ValueError:
            continue  # symbolic shapes: never tuned
        try:
            tuned = database.query_ir_module(func, target)
        except REPLAY_ERRORS as err:
            unreplayed.append(f"{gv.name_hint} ({type(err).__name__}: "
                              f"{str(err).splitlines()[0][:120] if str(err) else ''})")
            continue
        if tuned is None:
            missing.append(gv.name_hint)
            continue
        result.update_func(gv, _tuned(tuned["main"], func))
    if unreplayed:
        warnings.warn("MetaScheduleApplyDatabase: the best record does not replay on "
                      f"{'; '.join(unreplayed)}; the default schedule is used instead",
                      RuntimeWarning, stacklevel=3)
    if missing and enable_warning:
        warnings.warn(f"MetaScheduleApplyDatabase: no tuning records for {', '.join(missing)}",
                      RuntimeWarning, stacklevel=3)
    return result


def MetaScheduleApplyDatabase(work_dir=None, enable_warning=False):  # noqa: N802  (a pass)
    """The pass applying the records of ``work_dir`` (default: the current database,
    ``with database:``)."""

    def transform(mod, ctx):
        database = Database.current() if work_dir is None else JSONDatabase(work_dir=work_dir)
        if database is None:
            raise ValueError("MetaScheduleApplyDatabase needs a work_dir or an active "
                             "database (with database: ...)")
        return apply_database(mod, database, enable_warning=enable_warning)

    return ModulePass(transform, PassInfo(0, "MetaScheduleApplyDatabase"))
