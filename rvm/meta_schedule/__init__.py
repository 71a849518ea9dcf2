"""rvm.meta_schedule: tuning kernels by searching their schedules (TVM's ``meta_schedule``).

``from rvm import meta_schedule as ms`` (also reachable as ``rvm.tune``).

This package is a facade; the definitions live in its modules.
"""
from rvm.meta_schedule import arg_info, builder, database, runner
from rvm.meta_schedule.arg_info import ArgInfo, TensorInfo
from rvm.meta_schedule.target import Target

__all__ = ["ArgInfo", "Target", "TensorInfo", "arg_info", "builder", "database", "runner"]
