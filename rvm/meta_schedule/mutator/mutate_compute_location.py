"""MutateComputeLocation: resamples where a block is computed."""
from rvm.meta_schedule.mutator.mutator import Mutator, decided


class MutateComputeLocation(Mutator):
    """Resamples where a block is computed (a SampleComputeLocation decision)."""

    def apply(self, trace, rng):
        insts = decided(trace, "SampleComputeLocation")
        if not insts:
            return None
        return trace.with_decision(rng.choice(insts), None, remove_postproc=True)
