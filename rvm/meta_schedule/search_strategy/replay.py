"""Random search: ReplayTrace samples every candidate afresh from the design spaces,
ReplayFunc regenerates the design spaces for every candidate.

They are the searches the evolutionary one is compared with at equal trials.
"""
from rvm.meta_schedule.search_strategy.search_strategy import SearchStrategy, apply_postprocs


class ReplayTrace(SearchStrategy):
    """Each candidate: a design-space trace replayed with all its decisions sampled anew.

    ``max_fail_count`` bounds the fruitless samples (invalid or already measured)
    per wanted candidate before the space counts as exhausted.
    """

    def __init__(self, max_fail_count=100):
        super().__init__()
        self.max_fail_count = int(max_fail_count)

    def pick(self, count):
        return self.sample_new(count, set(), count * self.max_fail_count)


class ReplayFunc(SearchStrategy):
    """Each candidate: the space generator run again with a fresh seed."""

    def __init__(self, max_fail_count=100):
        super().__init__()
        self.max_fail_count = int(max_fail_count)

    def pick(self, count):
        out, seen = [], set()
        attempts = 0
        while len(out) < count and attempts < count * self.max_fail_count:
            attempts += 1
            for sch in self.context.generate_design_space():
                try:
                    if not apply_postprocs(sch, self.postprocs):
                        continue
                except (ValueError, TypeError, IndexError, KeyError, RuntimeError):
                    continue
                if self.admit(sch, seen, out) and len(out) == count:
                    break
        return out
