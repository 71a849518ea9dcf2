"""MutateCategoricalAnnotation: redraws the categorical choice behind an annotation."""
from rvm.meta_schedule.mutator.mutator import Mutator, decided


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
