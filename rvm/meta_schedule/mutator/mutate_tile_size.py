"""MutateTileSize: moves a factor between two levels of a sampled loop tiling.

A SamplePerfectTile decision such as [4, 8, 2, 8] becomes [2, 8, 4, 8]: one
level's factor is divided by one of its prime factors and another level's
multiplied by it, so the product stays the loop's extent; the innermost
level stays within the instruction's ``max_innermost_factor``.
"""
from rvm.meta_schedule.mutator.mutator import Mutator, decided


def _prime_factors(n):
    out, p = [], 2
    while p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    if n > 1:
        out.append(n)
    return out


class MutateTileSize(Mutator):
    """Changes one tiling decision (keeping the product)."""

    def __init__(self, max_retry=8):
        self.max_retry = int(max_retry)

    def apply(self, trace, rng):
        insts = [i for i in decided(trace, "SamplePerfectTile")
                 if len(trace.get_decision(i)) > 1
                 and any(f > 1 for f in trace.get_decision(i))]
        if not insts:
            return None
        for _ in range(self.max_retry):
            inst = rng.choice(insts)
            tiles = list(trace.get_decision(inst))
            max_inner = inst.attrs[1] if len(inst.attrs) > 1 else 0
            x = rng.choice([k for k, f in enumerate(tiles) if f > 1])
            p = rng.choice(_prime_factors(tiles[x]))
            y = rng.choice([k for k in range(len(tiles)) if k != x])
            tiles[x] //= p
            tiles[y] *= p
            if y == len(tiles) - 1 and max_inner and max_inner > 0 and tiles[y] > max_inner:
                continue
            return trace.with_decision(inst, tiles, remove_postproc=True)
        return None
