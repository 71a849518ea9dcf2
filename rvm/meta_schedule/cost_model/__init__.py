"""rvm.meta_schedule.cost_model: scoring candidates before measuring them.

This package is a facade; the definitions live in its modules.
"""
from rvm.meta_schedule.cost_model.cost_model import CostModel, PyCostModel
from rvm.meta_schedule.cost_model.gbt_model import GBTModel
from rvm.meta_schedule.cost_model.random_model import RandomModel


def create(kind="gbt", *args, **kwargs):
    """A cost model by kind: "gbt" (GBTModel, the default; "xgb" is accepted as its alias),
    "random" (RandomModel), or a CostModel as it is."""
    if isinstance(kind, CostModel):
        return kind
    if kind in ("gbt", "xgb"):
        return GBTModel(*args, **kwargs)
    if kind == "random":
        return RandomModel(*args, **kwargs)
    raise ValueError(f"unknown cost model kind {kind!r}; expected 'gbt', 'random' or a CostModel")


__all__ = ["CostModel", "GBTModel", "PyCostModel", "RandomModel", "create"]
