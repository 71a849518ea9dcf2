"""The interface of a default schedule rule."""


class ScheduleRule:
    """A default schedule for a class of kernels: ``apply(sch, info)`` schedules the
    function ``sch`` holds and returns True, or returns False (leaving ``sch``
    unusable: the caller starts the next rule on a fresh schedule of the original
    function). ``prepare(sch, info)`` runs first, on the same schedule, and may rewrite the
    function with schedule primitives (so the trace records it): the matmul rule pads
    fewer columns than one vector to a whole vector and partitions a symbolic row loop
    into full tiles and a remainder, the generic rule a symbolic innermost loop calling
    libm into whole vectors and a remainder. It returns False when the rule does not
    apply."""

    name = "rule"

    def prepare(self, sch, info):
        return True

    def apply(self, sch, info):
        raise NotImplementedError
