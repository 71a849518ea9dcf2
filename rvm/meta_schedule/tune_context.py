"""TuneContext: everything one tuning task needs (TVM's ``ms.TuneContext``).

A context holds the workload ``mod``, the ``target``, the ``space_generator``
(the schedules worth exploring) and the ``search_strategy`` (which of them to
measure next), a seeded random state and a logger. Both generators are
bound to the context when it is made, so they can read the target.
"""
import logging
import random

from rvm.meta_schedule.search_strategy import create as create_search_strategy
from rvm.meta_schedule.space_generator import create as create_space_generator
from rvm.meta_schedule.database.workload import workload_module
from rvm.meta_schedule.tune_log import LOGGER_NAME
from rvm.meta_schedule.tune_target import tune_target


class TuneContext:
    """The state of one tuning task."""

    def __init__(self, mod=None, *, target=None, space_generator=None, search_strategy=None,
                 task_name="main", rand_state=-1, num_threads=1, logger=None, layout_free=()):
        self.mod = None if mod is None else workload_module(mod)
        self.target = None if target is None else tune_target(target)
        self.task_name = task_name
        self.layout_free = [int(k) for k in layout_free]  # constant inputs (ExtractedTask)
        if rand_state is None or rand_state == -1:
            rand_state = random.SystemRandom().randrange(1, 2 ** 31)
        self.rand_state = int(rand_state)
        self.rng = random.Random(self.rand_state)
        self.num_threads = num_threads
        self.logger = logger or logging.getLogger(LOGGER_NAME)
        self.space_generator = create_space_generator(space_generator)
        self.search_strategy = create_search_strategy(search_strategy)
        self.space_generator.initialize_with_tune_context(self)
        self.search_strategy.initialize_with_tune_context(self)

    def fork_seed(self):
        """A new seed from the context's random state."""
        return self.rng.randrange(1, 2 ** 31)

    def generate_design_space(self):
        """The design spaces of ``mod``: a list of Schedules."""
        return self.space_generator.generate_design_space(self.mod)

    def pre_tuning(self, max_trials, num_trials_per_iter=64, design_spaces=None, database=None,
                   cost_model=None):
        """Starts a search of at most ``max_trials`` measurements."""
        if design_spaces is None:
            design_spaces = self.generate_design_space()
        self.search_strategy.pre_tuning(max_trials, num_trials_per_iter, design_spaces,
                                        database, cost_model)

    def generate_measure_candidates(self):
        """The next batch of MeasureCandidates, or None when the search is over."""
        return self.search_strategy.generate_measure_candidates()

    def notify_runner_results(self, measure_candidates, results):
        """Tells the search what the candidates measured."""
        self.search_strategy.notify_runner_results(measure_candidates, results)

    def post_tuning(self):
        """Ends the search."""
        self.search_strategy.post_tuning()

    def __repr__(self):
        return f"TuneContext({self.task_name!r}, target={str(self.target)!r})"
