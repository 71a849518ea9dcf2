"""RandomModel: scores at random, the search's control."""
import json

import numpy as np

from rvm.meta_schedule.cost_model.cost_model import CostModel


class RandomModel(CostModel):
    """Uniform random scores in [0, ``max_range``): a search guided by it is random search.

    >>> RandomModel(seed=1).predict(None, [object()] * 3).shape
    (3,)
    """

    def __init__(self, seed=None, path=None, max_range=100):
        self.rng = np.random.default_rng(seed)
        self.max_range = max_range
        if path is not None:
            self.load(path)

    def load(self, path):
        with open(path, encoding="utf-8") as f:
            self.rng.bit_generator.state = json.load(f)

    def save(self, path):
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.rng.bit_generator.state, f)

    def update(self, context, candidates, results):
        pass

    def predict(self, context, candidates):
        return self.rng.uniform(0, self.max_range, len(candidates))
