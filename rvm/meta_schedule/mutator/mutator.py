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


def annotation_samplers(trace, ann_key):
    """The SampleCategorical instructions whose value a trace annotates as ``ann_key``."""
    samplers = {inst.outputs[0]: inst for inst in decided(trace, "SampleCategorical")}
    found = []
    for inst in trace.insts:
        if inst.kind.name == "Annotate" and inst.attrs and inst.attrs[0] == ann_key:
            value = inst.inputs[-1]
            if value in samplers and samplers[value] not in found:
                found.append(samplers[value])
    return found


class MutateCategoricalAnnotation(Mutator):
    """Redraws the categorical choice behind an annotation ``ann_key`` (another candidate)."""

    ann_keys = ()

    def apply(self, trace, rng):
        insts = [i for key in self.ann_keys for i in annotation_samplers(trace, key)]
        insts = [i for i in insts if len(i.attrs[0]) > 1]
        if not insts:
            return None
        inst = rng.choice(insts)
        current = trace.get_decision(inst)
        choices = [k for k in range(len(inst.attrs[0])) if k != current]
        return trace.with_decision(inst, rng.choice(choices), remove_postproc=True)


class MutateUnroll(MutateCategoricalAnnotation):
    """Another maximum unroll step for the block's inner loops."""

    ann_keys = ("meta_schedule.unroll_explicit", "meta_schedule.unroll_implicit")


class MutateParallel(MutateCategoricalAnnotation):
    """Another maximum parallel extent for the block's outer loops."""

    ann_keys = ("meta_schedule.parallel",)


class MutateComputeLocation(Mutator):
    """Resamples where a block is computed (a SampleComputeLocation decision)."""

    def apply(self, trace, rng):
        insts = decided(trace, "SampleComputeLocation")
        if not insts:
            return None
        return trace.with_decision(rng.choice(insts), None, remove_postproc=True)
