"""MutateTileSize: moves a factor between two levels of a sampled loop tiling.

A SamplePerfectTile decision such as [4, 8, 2, 8] becomes [2, 8, 4, 8]: one
level's factor is divided by one of its prime factors and another level's
multiplied by it, so the product stays the loop's extent; the innermost
level stays within the instruction's ``max_innermost_factor``. A tile length
drawn by SampleCategorical and used as a split factor (the vector lanes of
MultiLevelTiling) is redrawn among its other candidates.
"""
from rvm.meta_schedule.mutator.mutator import Mutator, decided, samplers_used_by
from rvm.tir.schedule.sampling import prime_factors


def split_samplers(trace):
    """The SampleCategorical instructions whose value is a Split factor."""
    found = samplers_used_by(trace, lambda inst: inst.inputs[1:] if inst.kind.name == "Split"
                             else ())
    return [i for i in found if len(i.attrs[0]) > 1]


def _tilings_after(trace, sampler):
    """The SamplePerfectTile instructions tiling a loop split by ``sampler``'s value."""
    value = sampler.outputs[0]
    split_loops = set()
    for inst in trace.insts:
        if inst.kind.name == "Split" and value in inst.inputs[1:]:
            split_loops.update(inst.outputs)
    return [inst for inst in trace.insts
            if inst.kind.name == "SamplePerfectTile" and inst.inputs[0] in split_loops]


class MutateTileSize(Mutator):
    """Changes one tiling decision (keeping the product)."""

    def __init__(self, max_retry=8):
        self.max_retry = int(max_retry)

    def apply(self, trace, rng):
        insts = [i for i in decided(trace, "SamplePerfectTile")
                 if len(trace.get_decision(i)) > 1
                 and any(f > 1 for f in trace.get_decision(i))]
        lengths = split_samplers(trace)
        if lengths and (not insts or rng.random() < len(lengths) / (len(lengths) + len(insts))):
            inst = rng.choice(lengths)
            current = trace.get_decision(inst)
            choice = rng.choice([k for k in range(len(inst.attrs[0])) if k != current])
            mutated = trace.with_decision(inst, choice, remove_postproc=True)
            for tiling in _tilings_after(trace, inst):
                # The rest of the loop changed length: its tiling is drawn anew.
                mutated = mutated.with_decision(tiling, None, remove_postproc=True)
            return mutated
        if not insts:
            return None
        for _ in range(self.max_retry):
            inst = rng.choice(insts)
            tiles = list(trace.get_decision(inst))
            max_inner = inst.attrs[1] if len(inst.attrs) > 1 else 0
            x = rng.choice([k for k, f in enumerate(tiles) if f > 1])
            p = rng.choice(prime_factors(tiles[x]))
            y = rng.choice([k for k in range(len(tiles)) if k != x])
            tiles[x] //= p
            tiles[y] *= p
            if y == len(tiles) - 1 and max_inner and max_inner > 0 and tiles[y] > max_inner:
                continue
            return trace.with_decision(inst, tiles, remove_postproc=True)
        return None
