"""Full row tiles and one remainder for a kernel whose row count is symbolic: the
matmul rule's ``prepare`` step, the schedule primitive ``Schedule.partition_rows``
(``rvm.tir.schedule.primitive.partition_rows``), which the trace records so that
replaying the default schedule's trace gives the same kernel. ``TAIL`` suffixes the
names of the remainder's blocks and buffers; ``partition_func(func, depth, rows)`` is the
rewrite itself (None when the function's nests do not share such a loop).
"""
from rvm.tir.schedule.primitive.partition_rows import TAIL, partition_func

__all__ = ["TAIL", "partition_func"]
