"""Schedule rules: what the default space does to each block.

``apply(sch, block) -> [Schedule]``: the schedules the rule makes of ``sch``
for ``block`` (``[sch]`` itself when the rule does not apply; several when
it branches, each a ``sch.copy()``). Rules may sample decisions; the search
varies them.
"""
from rvm.tir.schedule.error import ScheduleError


class ScheduleRule:
    """Base class of schedule rules."""

    def initialize_with_tune_context(self, context):
        """Binds the rule to a tune context (its target)."""
        self.context = context

    def apply(self, sch, block):
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}()"


class PyScheduleRule(ScheduleRule):
    """A schedule rule written in Python by subclassing."""


def schedule_errors():
    """The exceptions a primitive raises for a use it does not allow."""
    return (ScheduleError, ValueError)
