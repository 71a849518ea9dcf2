"""Default schedules without search (TVM's dlight, for CPUs): rules chosen from shapes and
the CPU, applied by ``relax.build`` to every kernel that has no schedule of its own."""
from rvm.dlight.base import DefaultCPUSchedule, is_scheduled, schedule_func
from rvm.dlight.rule import ScheduleRule
from rvm.dlight.cpu.generic import Generic
from rvm.dlight.cpu.rules import RULES
from rvm.dlight.target import CPUInfo

__all__ = ["CPUInfo", "DefaultCPUSchedule", "Generic", "RULES", "ScheduleRule",
           "is_scheduled", "schedule_func"]
