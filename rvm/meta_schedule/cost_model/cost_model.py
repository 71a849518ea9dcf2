"""The cost-model interface.

A cost model scores candidates before they are measured, higher meaning
faster: ``update(context, candidates, results)`` learns from measurements,
``predict(context, candidates)`` returns one score per candidate.
"""


class CostModel:
    """Base class of cost models."""

    def load(self, path):
        """Restores the model saved at ``path``."""
        raise NotImplementedError

    def save(self, path):
        """Writes the model to ``path``."""
        raise NotImplementedError

    def update(self, context, candidates, results):
        """Learns from ``results`` (RunnerResults) of measured ``candidates``."""
        raise NotImplementedError

    def predict(self, context, candidates):
        """A numpy array of scores, one per candidate (higher: expected faster)."""
        raise NotImplementedError


class PyCostModel(CostModel):
    """A cost model written in Python by subclassing."""
