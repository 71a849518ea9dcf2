"""Space generators: the schedules a search explores, as traces with random decisions.

A space generator turns a workload into design spaces (Schedules whose
traces contain sampling instructions); the search re-samples and mutates
their decisions. Each generator also carries the schedule rules, the
postprocessors run on every candidate, and the mutators' probabilities;
"from-target" picks the defaults for the tune context's target. A generator is bound to
one tune context (its postprocessors read the task's workload): one given to several
tasks is cloned for each after the first (``space_generator.create``).
"""
import copy

from rvm.meta_schedule.default_config import (
    mutator_probs as default_mutator_probs, postprocs as default_postprocs,
    schedule_rules as default_schedule_rules,
)
from rvm.tir.schedule.schedule import Schedule

FROM_TARGET = "from-target"


class SpaceGenerator:
    """Base class: ``generate_design_space(mod) -> [Schedule]``."""

    def __init__(self, sch_rules=FROM_TARGET, postprocs=FROM_TARGET, mutator_probs=FROM_TARGET):
        self.sch_rules = sch_rules
        self.postprocs = postprocs
        self.mutator_probs = mutator_probs
        self.context = None

    def initialize_with_tune_context(self, context):
        """Binds the generator to ``context``, resolving "from-target" defaults."""
        self.context = context
        if self.sch_rules == FROM_TARGET:
            self.sch_rules = default_schedule_rules(context.target)
        if self.postprocs == FROM_TARGET:
            self.postprocs = default_postprocs(context.target)
        if self.mutator_probs == FROM_TARGET:
            self.mutator_probs = default_mutator_probs(context.target)
        for item in list(self.sch_rules or ()) + list(self.postprocs or ()) + list(
                (self.mutator_probs or {}).keys()):
            if hasattr(item, "initialize_with_tune_context"):
                item.initialize_with_tune_context(context)

    def generate_design_space(self, mod):
        raise NotImplementedError

    def clone(self):
        """An unbound copy of the generator, its rules, postprocessors and mutators copied
        too (each binds to its own context: a postprocessor reads the task's default
        rule)."""
        new = copy.copy(self)
        new.context = None
        if isinstance(self.sch_rules, (list, tuple)):
            new.sch_rules = [copy.copy(rule) for rule in self.sch_rules]
        if isinstance(self.postprocs, (list, tuple)):
            new.postprocs = [copy.copy(postproc) for postproc in self.postprocs]
        if isinstance(self.mutator_probs, dict):
            new.mutator_probs = {copy.copy(m): p for m, p in self.mutator_probs.items()}
        return new

    def _new_schedule(self, mod):
        seed = self.context.fork_seed() if self.context is not None else None
        return Schedule(mod, seed=seed)


class PySpaceGenerator(SpaceGenerator):
    """A space generator written in Python by subclassing."""


class ScheduleFn(SpaceGenerator):
    """The space a user's function writes: ``sch_fn(sch)`` schedules ``sch`` in place or
    returns a Schedule or a list of them (seed 004's ``stochastic_schedule_mm``)."""

    def __init__(self, sch_fn, sch_rules=(), postprocs=FROM_TARGET, mutator_probs=FROM_TARGET):
        if not callable(sch_fn):
            raise TypeError(f"ScheduleFn expects a function of a Schedule, got "
                            f"{type(sch_fn).__name__}")
        super().__init__(sch_rules, postprocs, mutator_probs)
        self.sch_fn = sch_fn

    def generate_design_space(self, mod):
        sch = self._new_schedule(mod)
        result = self.sch_fn(sch)
        if result is None:
            return [sch]
        if isinstance(result, (list, tuple)):
            return list(result)
        if hasattr(result, "trace") and hasattr(result, "mod"):
            return [result]
        raise TypeError(f"ScheduleFn: the function returned {type(result).__name__}; expected "
                        "None, a Schedule or a list of Schedules")


class SpaceGeneratorUnion(SpaceGenerator):
    """The design spaces of several generators together."""

    def __init__(self, space_generators, sch_rules=FROM_TARGET, postprocs=FROM_TARGET,
                 mutator_probs=FROM_TARGET):
        super().__init__(sch_rules, postprocs, mutator_probs)
        self.space_generators = list(space_generators)

    def initialize_with_tune_context(self, context):
        super().initialize_with_tune_context(context)
        for gen in self.space_generators:
            gen.initialize_with_tune_context(context)

    def clone(self):
        new = super().clone()
        new.space_generators = [gen.clone() for gen in self.space_generators]
        return new

    def generate_design_space(self, mod):
        return [sch for gen in self.space_generators for sch in gen.generate_design_space(mod)]
