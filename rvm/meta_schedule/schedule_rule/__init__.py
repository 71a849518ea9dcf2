"""rvm.meta_schedule.schedule_rule: what the default space does to each block.

This package is a facade; the definitions live in its modules.
"""
from rvm.meta_schedule.schedule_rule.auto_inline import AutoInline
from rvm.meta_schedule.schedule_rule.multi_level_tiling import MultiLevelTiling, ReuseType
from rvm.meta_schedule.schedule_rule.parallel_vectorize_unroll import ParallelizeVectorizeUnroll
from rvm.meta_schedule.schedule_rule.schedule_rule import PyScheduleRule, ScheduleRule

__all__ = ["AutoInline", "MultiLevelTiling", "ParallelizeVectorizeUnroll", "PyScheduleRule",
           "ReuseType", "ScheduleRule"]
