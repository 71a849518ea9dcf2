"""The default schedule of a workload as a tuning candidate: the search's first measurement.

``relax.build`` gives every kernel without a tuning record the rule-based schedule of
``rvm.dlight`` (DefaultCPUSchedule). The tuner starts from it: ``default_schedule(mod,
target)`` applies the same rules, for the same target, to a traced Schedule of the
workload, so its trace is a candidate like any other: measured in the first batch,
kept in the database, and replayed by ``query_ir_module`` into exactly the kernel the
build would have made. The best record of a task is then never slower than the
default kernel as measured, and a tuned build never slower than the default one.
"""
from rvm.dlight.base import trace_default_schedule
from rvm.dlight.cpu.rules import RULES
from rvm.dlight.target import CPUInfo


def default_schedule(mod, target):
    """A Schedule of ``mod`` (a workload module) with the default CPU schedule for
    ``target`` applied (its trace replays it), or None when no rule applies."""
    found = trace_default_schedule(mod, RULES, CPUInfo.from_target(target))
    return None if found is None else found[0]
