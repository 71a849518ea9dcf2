"""Random variables of a schedule: handles to blocks, loops and sampled integers.

A schedule hands out these handles instead of IR nodes: the IR they refer to
changes with every primitive applied, the handle stays valid as long as the
block or loop exists. ``sch.get(rv)`` gives the current Block, For or integer.
"""
from rvm.tir.expr import Var


class BlockRV:
    """A handle to a block of the schedule's module."""

    __slots__ = ("__weakref__",)

    def __repr__(self):
        return f"BlockRV(0x{id(self):x})"


class LoopRV:
    """A handle to a loop of the schedule's module (or a compute-location mark)."""

    __slots__ = ("__weakref__",)

    def __repr__(self):
        return f"LoopRV(0x{id(self):x})"


class ExprRV(Var):
    """A sampled integer: a variable in the trace, a number through ``sch.get(v)``.

    It is a TIR variable, so expressions such as ``v * 2`` can be passed as split factors.
    """

    def __init__(self, name_hint="v", dtype="int32"):
        super().__init__(name_hint, dtype)


class _Mark(LoopRV):
    """The special compute locations of ``sample_compute_location``: root and inline."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"LoopRV.{self.name}_mark"


ROOT_MARK = _Mark("root")
INLINE_MARK = _Mark("inline")
LoopRV.root_mark = ROOT_MARK
LoopRV.inline_mark = INLINE_MARK
