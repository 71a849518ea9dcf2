"""MutateCategoricalAnnotation: redraws the categorical choice behind an annotation."""
from rvm.meta_schedule.mutator.mutator import Mutator, samplers_used_by


def _annotated_as(key):
    """The value an instruction annotates as ``key`` (none unless it is such an Annotate)."""
    return lambda inst: inst.inputs[-1:] if inst.kind.name == "Annotate" and \
        inst.attrs[:1] == [key] else ()


class MutateCategoricalAnnotation(Mutator):
    """Redraws the categorical choice behind an annotation ``ann_key`` (another candidate)."""

    ann_keys = ()

    def apply(self, trace, rng):
        insts = [i for key in self.ann_keys for i in samplers_used_by(trace, _annotated_as(key))]
        insts = [i for i in insts if len(i.attrs[0]) > 1]
        if not insts:
            return None
        inst = rng.choice(insts)
        current = trace.get_decision(inst)
        choices = [k for k in range(len(inst.attrs[0])) if k != current]
        return trace.with_decision(inst, rng.choice(choices), remove_postproc=True)
