"""Gradient-boosted regression trees in numpy: the learner behind the default cost model.

Squared-error boosting over histogram splits: each feature is cut into at
most ``max_bins`` quantile bins once, and every node finds its best split
from per-bin sums of the residuals (one ``np.bincount`` per node for all
features). Tuning data is small (hundreds to a few thousand candidates of
a few dozen features), so a fit takes a fraction of a second.

>>> rng = np.random.default_rng(0)
>>> x = rng.uniform(size=(400, 3))
>>> y = np.where(x[:, 0] > 0.5, 1.0, 0.0) + 0.5 * x[:, 1]
>>> model = GradientBoostedTrees(n_trees=60).fit(x, y)
>>> float(np.abs(model.predict(x) - y).mean()) < 0.05
True
"""
import numpy as np


class _Tree:
    """Arrays of one regression tree: node -> (feature, threshold bin, left, right, value)."""

    def __init__(self):
        self.feature = []
        self.threshold = []
        self.left = []
        self.right = []
        self.value = []

    def add(self, value):
        self.feature.append(-1)
        self.threshold.append(0)
        self.left.append(-1)
        self.right.append(-1)
        self.value.append(value)
        return len(self.value) - 1

    def freeze(self):
        self.feature = np.asarray(self.feature, dtype=np.int64)
        self.threshold = np.asarray(self.threshold, dtype=np.int64)
        self.left = np.asarray(self.left, dtype=np.int64)
        self.right = np.asarray(self.right, dtype=np.int64)
        self.value = np.asarray(self.value, dtype=np.float64)

    def predict_binned(self, bins):
        node = np.zeros(len(bins), dtype=np.int64)
        rows = np.arange(len(bins))
        while True:
            feature = self.feature[node]
            inner = feature >= 0
            if not inner.any():
                return self.value[node]
            go_left = bins[rows, np.maximum(feature, 0)] <= self.threshold[node]
            child = np.where(go_left, self.left[node], self.right[node])
            node = np.where(inner, child, node)


class GradientBoostedTrees:
    """A squared-error gradient-boosted tree regressor.

    ``n_trees`` rounds of ``learning_rate``-shrunk trees of at most
    ``max_depth`` levels, leaves of at least ``min_samples_leaf`` rows, each
    tree fit on a ``subsample`` fraction of the rows (seeded by ``seed``).
    """

    def __init__(self, n_trees=100, learning_rate=0.1, max_depth=5, min_samples_leaf=3,
                 max_bins=32, subsample=0.8, seed=0):
        self.n_trees = int(n_trees)
        self.learning_rate = float(learning_rate)
        self.max_depth = int(max_depth)
        self.min_samples_leaf = int(min_samples_leaf)
        self.max_bins = int(max_bins)
        self.subsample = float(subsample)
        self.seed = seed
        self.edges = None
        self.trees = []
        self.base = 0.0

    def _bin(self, x):
        return np.stack([np.searchsorted(e, x[:, f], side="right")
                         for f, e in enumerate(self.edges)], axis=1)

    def fit(self, x, y, sample_weight=None):
        """Fits the trees to rows ``x`` (n x d) and targets ``y`` (n); returns self."""
        x = np.asarray(x, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        if x.ndim != 2 or len(x) != len(y) or len(y) == 0:
            raise ValueError(f"fit expects x of shape (n, d) and y of shape (n,) with n > 0, got "
                             f"{x.shape} and {y.shape}")
        weight = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
        quantiles = np.linspace(0, 1, self.max_bins + 1)[1:-1]
        self.edges = [np.unique(np.quantile(x[:, f], quantiles)) for f in range(x.shape[1])]
        bins = self._bin(x)
        rng = np.random.default_rng(self.seed)
        self.base = float(np.average(y, weights=weight))
        pred = np.full(len(y), self.base)
        self.trees = []
        for _ in range(self.n_trees):
            residual = (y - pred) * weight
            rows = np.arange(len(y))
            if self.subsample < 1.0 and len(y) > 10:
                rows = rng.choice(len(y), max(2, int(len(y) * self.subsample)), replace=False)
            tree = _Tree()
            self._grow(tree, bins, residual, weight, rows, 0)
            tree.freeze()
            self.trees.append(tree)
            pred += self.learning_rate * tree.predict_binned(bins)
        return self

    def _grow(self, tree, bins, residual, weight, rows, depth):
        total_w = weight[rows].sum()
        node = tree.add(residual[rows].sum() / max(total_w, 1e-12))
        if depth >= self.max_depth or len(rows) < 2 * self.min_samples_leaf:
            return node
        split = self._best_split(bins[rows], residual[rows], weight[rows])
        if split is None:
            return node
        feature, threshold = split
        go_left = bins[rows, feature] <= threshold
        tree.feature[node] = feature
        tree.threshold[node] = threshold
        tree.left[node] = self._grow(tree, bins, residual, weight, rows[go_left], depth + 1)
        tree.right[node] = self._grow(tree, bins, residual, weight, rows[~go_left], depth + 1)
        return node

    def _best_split(self, bins, residual, weight):
        n, d = bins.shape
        width = self.max_bins + 1
        flat = (bins + np.arange(d) * width).ravel()
        g = np.bincount(flat, np.repeat(residual, d).reshape(n, d).ravel(), d * width)
        w = np.bincount(flat, np.repeat(weight, d).reshape(n, d).ravel(), d * width)
        c = np.bincount(flat, minlength=d * width)
        g, w, c = (a.reshape(d, width).cumsum(axis=1) for a in (g, w, c))
        g_all, w_all = g[:, -1:], w[:, -1:]
        w_right = w_all - w
        valid = (c >= self.min_samples_leaf) & (c[:, -1:] - c >= self.min_samples_leaf)
        with np.errstate(divide="ignore", invalid="ignore"):
            gain = g ** 2 / w + (g_all - g) ** 2 / w_right - g_all ** 2 / w_all
        gain = np.where(valid & (w > 0) & (w_right > 0), gain, -np.inf)
        best = int(np.argmax(gain))
        if not np.isfinite(gain.flat[best]) or gain.flat[best] <= 1e-12:
            return None
        return divmod(best, width)

    def predict(self, x):
        """Predictions for rows ``x`` (n x d)."""
        x = np.asarray(x, dtype=np.float64)
        if not self.trees:
            return np.full(len(x), self.base)
        bins = self._bin(x)
        pred = np.full(len(x), self.base)
        for tree in self.trees:
            pred += self.learning_rate * tree.predict_binned(bins)
        return pred
