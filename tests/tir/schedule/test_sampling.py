"""sample_perfect_tile and sample_categorical: values, decisions, seeds, illegal decisions."""
import pytest

from rvm.tir.schedule import ExprRV, Schedule, ScheduleError
from rvm.tir.schedule.sampling import divisors, prime_factors, sample_perfect_tile

from tests.tir.schedule.common import Matmul


def _j(sch):
    return sch.get_loops(sch.get_block("C"))[1]


def test_perfect_tile_is_a_tiling_and_is_recorded():
    for seed in range(20):
        sch = Schedule(Matmul, seed=seed)
        factors = sch.sample_perfect_tile(_j(sch), n=3, max_innermost_factor=8)
        assert all(isinstance(v, ExprRV) for v in factors)
        values = [sch.get(v) for v in factors]
        assert values[0] * values[1] * values[2] == 128 and values[2] <= 8
        inst = sch.trace.insts[-1]
        assert inst.kind.name == "SamplePerfectTile"
        assert sch.trace.get_decision(inst) == values


def test_perfect_tile_same_seed_same_decisions():
    def draw(seed):
        sch = Schedule(Matmul, seed=seed)
        return [sch.get(v) for v in sch.sample_perfect_tile(_j(sch), n=4)]

    assert draw(7) == draw(7)
    assert len({tuple(draw(s)) for s in range(30)}) > 3


def test_perfect_tile_with_decision():
    sch = Schedule(Matmul)
    v0, v1 = sch.sample_perfect_tile(_j(sch), n=2, decision=[8, 16])
    assert (sch.get(v0), sch.get(v1)) == (8, 16)
    j0, j1 = sch.split(_j(sch), [v0, v1])
    assert sch.get(j1).extent.value == 16
    assert sch.get(v0 * v1) == 128


def test_perfect_tile_rejects_bad_decisions():
    sch = Schedule(Matmul)
    with pytest.raises(ScheduleError, match="multiply to 64, not the extent 128"):
        sch.sample_perfect_tile(_j(sch), n=2, decision=[8, 8])
    with pytest.raises(ScheduleError, match="expected a list of 2 factors"):
        sch.sample_perfect_tile(_j(sch), n=2, decision=[128])


def test_perfect_tile_needs_a_constant_extent():
    from tests.tir.schedule.test_handles import Symbolic
    sch = Schedule(Symbolic)
    loop = sch.get_loops(sch.get_block("B"))[1]
    with pytest.raises(ScheduleError, match="extent must be a constant"):
        sch.sample_perfect_tile(loop, n=2)


def test_categorical():
    sch = Schedule(Matmul, seed=3)
    counts = {}
    for _ in range(200):
        v = sch.sample_categorical([0, 16, 64, 512], [0.1, 0.2, 0.3, 0.4])
        counts[sch.get(v)] = counts.get(sch.get(v), 0) + 1
    assert set(counts) == {0, 16, 64, 512} and counts[512] > counts[0]
    fixed = sch.sample_categorical([0, 16, 64], [1, 1, 1], decision=2)
    assert sch.get(fixed) == 64
    assert sch.trace.get_decision(sch.trace.insts[-1]) == 2


def test_categorical_rejects_bad_input():
    sch = Schedule(Matmul)
    with pytest.raises(ScheduleError, match="decision must index the candidates"):
        sch.sample_categorical([1, 2], [0.5, 0.5], decision=5)
    with pytest.raises(ValueError, match="as many probabilities"):
        sch.sample_categorical([1, 2], [1.0])


def test_factorization_helpers():
    assert prime_factors(360) == [2, 2, 2, 3, 3, 5]
    assert divisors(12) == [1, 2, 3, 4, 6, 12]
    import random
    rng = random.Random(0)
    for extent in (1, 7, 64, 784):
        for n in (1, 2, 4):
            f = sample_perfect_tile(rng, extent, n, 16)
            prod = 1
            for x in f:
                prod *= x
            assert len(f) == n and prod == extent and (n == 1 or f[-1] <= 16)
