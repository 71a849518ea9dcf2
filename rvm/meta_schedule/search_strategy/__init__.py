"""rvm.meta_schedule.search_strategy: which candidates to measure next.

This package is a facade; the definitions live in its modules.
"""
from rvm.meta_schedule.search_strategy.create import create
from rvm.meta_schedule.search_strategy.evolutionary_search import EvolutionarySearch
from rvm.meta_schedule.search_strategy.replay import ReplayFunc, ReplayTrace
from rvm.meta_schedule.search_strategy.search_strategy import PySearchStrategy, SearchStrategy

__all__ = ["EvolutionarySearch", "PySearchStrategy", "ReplayFunc", "ReplayTrace",
           "SearchStrategy", "create"]
