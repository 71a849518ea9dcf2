"""rvm.tir.schedule: TensorIR schedules, their random variables and traces.

This package is a facade; the definitions live in its modules.
"""
from rvm.tir.schedule.error import ScheduleError
from rvm.tir.schedule.instruction import KINDS, Instruction, InstructionKind
from rvm.tir.schedule.rv import BlockRV, ExprRV, LoopRV
from rvm.tir.schedule.schedule import Schedule
from rvm.tir.schedule.state import ScheduleState, StmtSRef
from rvm.tir.schedule.trace import Trace

__all__ = ["KINDS", "BlockRV", "ExprRV", "Instruction", "InstructionKind", "LoopRV", "Schedule",
           "ScheduleError", "ScheduleState", "StmtSRef", "Trace"]
