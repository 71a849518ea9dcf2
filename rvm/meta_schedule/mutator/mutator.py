"""Mutators: each changes one decision of a trace, giving a nearby schedule.

``apply(trace, rng) -> Trace or None`` (None: nothing to mutate). The
evolutionary search picks a mutator by the space's ``mutator_probs``.
"""


class Mutator:
    """Base class of mutators."""

    def initialize_with_tune_context(self, context):
        """Binds the mutator to a tune context (nothing to do for most)."""

    def apply(self, trace, rng):
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}()"


class PyMutator(Mutator):
    """A mutator written in Python by subclassing."""


def decided(trace, kind_name):
    """The instructions of ``trace`` of kind ``kind_name`` that carry a decision."""
    return [inst for inst in trace.insts
            if inst.kind.name == kind_name and trace.get_decision(inst) is not None]
