"""GBTModel: the default cost model, gradient-boosted trees over loop-nest features.

It learns, for each workload, the normalized throughput of a candidate
(the workload's best measured time divided by the candidate's; 0 for a
failed one) from PerStoreFeature vectors, refitting after every batch of
measurements. Times are normalized among the measurements of one hardware
fingerprint: a runner whose workers differ (RayRunner on a mixed cluster)
teaches the model how candidates rank on each machine, never that a kernel is
slow because a slower machine timed it. Until ``num_warmup_samples``
candidates are measured it scores at random, as a model that knows nothing
should.

>>> GBTModel().predict(None, []).shape
(0,)
"""
import numpy as np

from rvm.meta_schedule.cost_model.cost_model import CostModel
from rvm.meta_schedule.cost_model.gbdt import GradientBoostedTrees
from rvm.meta_schedule.feature_extractor.feature_extractor import PerStoreFeature


def _group_of(context):
    mod = getattr(context, "mod", None)
    if mod is None:
        return "default"
    from rvm.ir.base import structural_hash

    return str(structural_hash(mod))


class GBTModel(CostModel):
    """Boosted trees on ``extractor``'s features (PerStoreFeature by default).

    ``num_warmup_samples``: measurements before the model's scores are used;
    ``n_trees``, ``max_depth``, ``learning_rate``: the trees; ``seed``: the
    random scores of the warm-up and the trees' row sampling.
    """

    def __init__(self, extractor=None, num_warmup_samples=16, n_trees=80, max_depth=5,
                 learning_rate=0.15, seed=0, path=None):
        self.extractor = extractor or PerStoreFeature()
        self.num_warmup_samples = int(num_warmup_samples)
        self.tree_config = {"n_trees": n_trees, "max_depth": max_depth,
                            "learning_rate": learning_rate, "seed": seed}
        self.rng = np.random.default_rng(seed)
        self.features = []
        self.costs = []
        self.groups = []
        self.model = None
        if path is not None:
            self.load(path)

    def _targets(self):
        costs = np.asarray(self.costs, dtype=np.float64)
        groups = np.asarray(self.groups)
        targets = np.zeros(len(costs))
        for group in set(self.groups):
            mask = groups == group
            ok = mask & np.isfinite(costs)
            if ok.any():
                best = costs[ok].min()
                targets[ok] = best / costs[ok]
        return targets

    def _fit(self):
        if len(self.costs) < max(2, self.num_warmup_samples):
            self.model = None
            return
        x = np.asarray(self.features)
        self.model = GradientBoostedTrees(**self.tree_config).fit(x, self._targets())

    def update(self, context, candidates, results):
        workload = _group_of(context)
        feats = self.extractor.extract_from(context, candidates)
        for feature, result in zip(feats, results):
            ok = result.run_secs and result.error_msg is None
            self.features.append(np.asarray(feature, dtype=np.float32))
            self.costs.append(float(np.min(result.run_secs)) if ok else np.inf)
            self.groups.append(f"{workload} | {result.fingerprint}")
        self._fit()

    def predict(self, context, candidates):
        if not candidates:
            return np.zeros(0)
        if self.model is None:
            return self.rng.uniform(0, 1, len(candidates))
        feats = np.asarray(self.extractor.extract_from(context, candidates))
        return self.model.predict(feats)

    def save(self, path):
        """Writes the training data (the trees are refit from it on load)."""
        with open(path, "wb") as f:
            np.savez(f, features=np.asarray(self.features, dtype=np.float32).reshape(
                len(self.features), -1), costs=np.asarray(self.costs, dtype=np.float64),
                groups=np.asarray(self.groups, dtype=str))

    def load(self, path):
        data = np.load(path, allow_pickle=False)
        self.features = list(data["features"])
        self.costs = [float(c) for c in data["costs"]]
        self.groups = [str(g) for g in data["groups"]]
        self._fit()
