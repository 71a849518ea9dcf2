"""What the search does once per kernel: a candidate equal to one already described (same
scheduled module) reuses its features, and a measured record is replayed into the
population once per search, not once per batch."""
import collections

from rvm import meta_schedule as ms
from rvm.meta_schedule.database import MemoryDatabase
from rvm.meta_schedule.database.tuning_record import TuningRecord
from rvm.meta_schedule.default_schedule import default_schedule
from rvm.meta_schedule.feature_extractor import feature_extractor as fe
from rvm.meta_schedule.measure_candidate import MeasureCandidate
from rvm.meta_schedule.search_strategy import evolutionary_search as es
from rvm.meta_schedule.search_strategy.search_strategy import candidate_hash
from rvm.meta_schedule.tune_context import TuneContext
from tests.meta_schedule.workloads import MyModule

TARGET = "llvm --num-cores=1"


def _counting(monkeypatch, module, name):
    calls = []
    original = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_an_equal_kernel_reuses_its_features(monkeypatch):
    monkeypatch.setattr(fe, "_BY_HASH", collections.OrderedDict())  # earlier tests' kernels
    lowered = _counting(monkeypatch, fe, "lowered_module")
    context = TuneContext(MyModule, target=TARGET, rand_state=1)
    first, second = default_schedule(MyModule, TARGET), default_schedule(MyModule, TARGET)
    shash = candidate_hash(first)
    assert shash == candidate_hash(second) and first is not second
    extractor = fe.PerStoreFeature()
    a = MeasureCandidate(first, [])
    a.candidate_hash = shash
    b = MeasureCandidate(second, [])
    b.candidate_hash = shash
    [fa] = extractor.extract_from(context, [a])
    [fb] = extractor.extract_from(context, [b])
    assert len(lowered) == 1 and (fa == fb).all()
    # without a hash, a new schedule is lowered again
    extractor.extract_from(context, [MeasureCandidate(default_schedule(MyModule, TARGET), [])])
    assert len(lowered) == 2


def test_measured_records_are_replayed_once_per_search(monkeypatch):
    replays = _counting(monkeypatch, es, "replay")
    database = MemoryDatabase()
    context = TuneContext(MyModule, target=TARGET, rand_state=1,
                          search_strategy=ms.search_strategy.EvolutionarySearch())
    workload = database.commit_workload(MyModule)
    sch = default_schedule(MyModule, TARGET)
    database.commit_tuning_record(TuningRecord(sch.trace, workload, [1e-5], TARGET,
                                               candidate_hash=candidate_hash(sch)))
    strategy = context.search_strategy
    strategy.pre_tuning(8, 4, context.generate_design_space(), database)
    first = strategy._measured_population(4)
    again = strategy._measured_population(4)
    assert len(replays) == 1 and [h for _, h in first] == [h for _, h in again] == \
        [candidate_hash(sch)]
    strategy.pre_tuning(8, 4, context.generate_design_space(), database)  # a new search
    strategy._measured_population(4)
    assert len(replays) == 2


class CountingModel(ms.cost_model.PyCostModel):
    """Scores at random; counts the candidates it was asked to score."""

    def __init__(self):
        self.scored = 0

    def update(self, context, candidates, results):
        pass

    def predict(self, context, candidates):
        import numpy as np

        self.scored += len(candidates)
        return np.random.default_rng(self.scored).uniform(0, 1, len(candidates))


def test_a_batch_scores_a_bounded_number_of_schedules_per_candidate():
    # Each scored schedule was replayed and lowered: the search's main cost per trial.
    model = CountingModel()
    context = TuneContext(MyModule, target=TARGET, rand_state=2,
                          search_strategy=ms.search_strategy.EvolutionarySearch())
    strategy = context.search_strategy
    strategy.pre_tuning(64, 16, context.generate_design_space(), MemoryDatabase(), model)
    picked = strategy.pick(16)
    assert len(picked) == 16
    per_candidate = model.scored / len(picked)
    assert per_candidate <= 1.5 * (strategy.genetic_num_iters + 1) <= 4.5
