"""The default schedule of a workload as a tuning candidate: the search's first measurement.

``relax.build`` gives every kernel without a tuning record the rule-based schedule of
``rvm.dlight`` (DefaultCPUSchedule). The tuner starts from it: ``default_schedule(mod,
target)`` applies the same rules, for the same target, to a traced Schedule of the
workload, so its trace is a candidate like any other: measured in the first batch,
kept in the database, and replayed by ``query_ir_module`` into exactly the kernel the
build would have made. The best record of a task is then never slower than the
default kernel as measured, and a tuned build never slower than the default one.
The rules decide from the kernel's ``layout_free_buffers`` (the build marks its bound
weights) whether to pack an input: ``layout_free`` gives the task's, so the default is
the build's, traced on the workload as it is (its trace replays on the unmarked kernel).
"""
from rvm.dlight.base import trace_default_schedule
from rvm.dlight.cpu.rules import RULES
from rvm.dlight.target import CPUInfo
from rvm.ir.module import IRModule
from rvm.meta_schedule.layout_preproc import mark_layout_free
from rvm.tir.schedule.schedule import Schedule


def default_schedule(mod, target, layout_free=()):
    """A Schedule of ``mod`` (a workload module) with the default CPU schedule for
    ``target`` applied (its trace replays it), the inputs at ``layout_free`` positions
    taken as constants as the build takes them, or None when no rule applies."""
    marked = IRModule({"main": mark_layout_free(mod["main"], layout_free)})
    found = trace_default_schedule(marked, RULES, CPUInfo.from_target(target))
    if found is None:
        return None
    if not layout_free:
        return found[0]
    sch = Schedule(mod)
    found[0].trace.apply_to_schedule(sch)
    return sch
