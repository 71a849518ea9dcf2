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


def samplers_used_by(trace, uses):
    """The decided SampleCategorical instructions whose value an instruction of ``trace``
    takes among ``uses(inst)`` (its inputs that matter), in order of first use."""
    samplers = {inst.outputs[0]: inst for inst in decided(trace, "SampleCategorical")}
    found = []
    for inst in trace.insts:
        for value in uses(inst):
            if value in samplers and samplers[value] not in found:
                found.append(samplers[value])
    return found
