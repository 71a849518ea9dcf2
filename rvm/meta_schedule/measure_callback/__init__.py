"""rvm.meta_schedule.measure_callback: what happens to measured candidates (TVM's
``ms.measure_callback``).

This package is a facade; the definitions live in its modules.
"""
from rvm.meta_schedule.measure_callback.add_to_database import AddToDatabase
from rvm.meta_schedule.measure_callback.measure_callback import (
    MeasureCallback, PyMeasureCallback,
)
from rvm.meta_schedule.measure_callback.update_cost_model import UpdateCostModel


def create(kind="default"):
    """The callbacks of a tuning run: "default" or None (AddToDatabase, then
    UpdateCostModel), or a list of MeasureCallbacks as it is."""
    if kind is None or kind == "default":
        return [AddToDatabase(), UpdateCostModel()]
    if isinstance(kind, (list, tuple)) and all(isinstance(c, MeasureCallback) for c in kind):
        return list(kind)
    raise ValueError(f"unknown measure callbacks {kind!r}; expected 'default' or a list of "
                     "MeasureCallbacks")


__all__ = ["AddToDatabase", "MeasureCallback", "PyMeasureCallback", "UpdateCostModel",
           "create"]
