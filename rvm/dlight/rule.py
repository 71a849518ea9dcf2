"""The interface of a default schedule rule."""


class ScheduleRule:
    """A default schedule for a class of kernels: ``apply(sch, info)`` schedules the
    function ``sch`` holds and returns True, or returns False (leaving ``sch``
    unusable: the caller starts the next rule on a fresh schedule of the original
    function). ``prepare(func, info)`` runs first and gives the function the schedule
    starts from: ``func`` itself, or a rewrite computing the same (the matmul rule
    partitions a symbolic row loop into full tiles and a remainder)."""

    name = "rule"

    def prepare(self, func, info):
        return func

    def apply(self, sch, info):
        raise NotImplementedError
