"""rvm.meta_schedule.search_strategy: which candidates to measure next.

This package is a facade; the definitions live in its modules.
"""
from rvm.meta_schedule.search_strategy.evolutionary_search import EvolutionarySearch
from rvm.meta_schedule.search_strategy.replay import ReplayFunc, ReplayTrace
from rvm.meta_schedule.search_strategy.search_strategy import PySearchStrategy, SearchStrategy


def create(kind="evolutionary", *args, **kwargs):
    """A strategy by kind (what ``tune_tir``'s ``strategy`` accepts): "evolutionary" or None
    (EvolutionarySearch), "replay-trace" (ReplayTrace), "replay-func" (ReplayFunc), or a
    SearchStrategy as it is."""
    if isinstance(kind, SearchStrategy):
        return kind
    if kind is None or kind == "evolutionary":
        return EvolutionarySearch(*args, **kwargs)
    if kind == "replay-trace":
        return ReplayTrace(*args, **kwargs)
    if kind == "replay-func":
        return ReplayFunc(*args, **kwargs)
    raise ValueError(f"unknown search strategy {kind!r}; expected 'evolutionary', "
                     "'replay-trace', 'replay-func' or a SearchStrategy")


__all__ = ["EvolutionarySearch", "PySearchStrategy", "ReplayFunc", "ReplayTrace",
           "SearchStrategy", "create"]
