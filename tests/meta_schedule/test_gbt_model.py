"""GBTModel learns normalized throughput per workload and per hardware fingerprint."""
import numpy as np

from rvm.meta_schedule.cost_model import GBTModel
from rvm.meta_schedule.runner.runner import RunnerResult


class _Features:
    """An extractor whose candidates are their own feature vectors."""

    def extract_from(self, context, candidates):
        return [np.asarray(c, dtype=np.float32) for c in candidates]


def _measured(model, xs, fingerprint, slowdown=1.0):
    """Candidates with features xs timed at slowdown / (0.2 + x[0]) seconds."""
    results = [RunnerResult(run_secs=[slowdown / (0.2 + x[0])] * 3, fingerprint=fingerprint)
               for x in xs]
    model.update(None, list(xs), results)


def _throughput(xs):
    """What the model should learn: the best time over each candidate's, on any machine."""
    return (0.2 + xs[:, 0]) / (0.2 + 1.0)


def test_ranks_candidates_by_their_measured_speed():
    rng = np.random.default_rng(0)
    xs = rng.uniform(size=(60, 3))
    xs[0, 0] = 1.0
    model = GBTModel(_Features(), num_warmup_samples=8)
    _measured(model, xs, "machine A")
    fresh = rng.uniform(size=(40, 3))
    predicted = model.predict(None, list(fresh))
    assert np.abs(predicted - _throughput(fresh)).mean() < 0.05


def test_times_from_a_slower_machine_do_not_make_its_candidates_look_slow():
    rng = np.random.default_rng(1)
    fast, slow = rng.uniform(size=(40, 3)), rng.uniform(size=(40, 3))
    fast[0, 0] = slow[0, 0] = 1.0
    model = GBTModel(_Features(), num_warmup_samples=8)
    _measured(model, fast, "machine A")
    _measured(model, slow, "machine B", slowdown=10.0)  # the same kernels, 10x slower there
    fresh = rng.uniform(size=(40, 3))
    predicted = model.predict(None, list(fresh))
    # compared with the fast machine's best, machine B's candidates would look 10x slower
    # and the model would average the two: 0.55x the throughput it should learn
    assert np.abs(predicted - _throughput(fresh)).mean() < 0.05


def test_failed_candidates_learn_zero_throughput():
    xs = np.linspace(0, 1, 30).reshape(-1, 1)
    model = GBTModel(_Features(), num_warmup_samples=8)
    results = [RunnerResult(error_msg="crashed") if x[0] < 0.5 else
               RunnerResult(run_secs=[1e-3], fingerprint="machine A") for x in xs]
    model.update(None, list(xs), results)
    low, high = model.predict(None, [[0.1], [0.9]])
    assert low < 0.1 < 0.9 < high
