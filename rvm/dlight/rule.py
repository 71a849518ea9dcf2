"""The interface of a default schedule rule."""


class ScheduleRule:
    """A default schedule for a class of kernels: ``apply(sch, info)`` schedules the
    function ``sch`` holds and returns True, or returns False (leaving ``sch``
    unusable: the caller starts the next rule on a fresh schedule)."""

    name = "rule"

    def apply(self, sch, info):
        raise NotImplementedError
