"""EvolutionarySearch: candidates evolved by mutating trace decisions, guided by a cost model.

Each batch starts from a population of the best measured schedules of the
workload (``init_measured_ratio`` of it, from the database) and fresh
random samples of the design spaces. For ``genetic_num_iters`` generations
the cost model scores the population, parents are drawn in proportion to
their scores, and a mutator (chosen by the space's ``mutator_probs``)
changes one decision of a parent's trace (a tile size, an unroll factor, a
parallel extent); children that replay and pass the postprocessors form
the next population. The batch is the best-scored unmeasured schedules seen,
with an ``eps_greedy`` share of random samples so a wrong model cannot
starve the search. With a RandomModel this is random search.
"""
from rvm.meta_schedule.measure_candidate import MeasureCandidate
from rvm.meta_schedule.search_strategy.search_strategy import (
    MAX_MISSES, SearchStrategy, candidate_hash, replay,
)
from rvm.tir.schedule.trace import trace_from_json


class EvolutionarySearch(SearchStrategy):
    """Evolutionary search over trace decisions (TVM's parameter names).

    A batch of ``n`` candidates evolves a population of ``min(population_size,
    max(8, 1.5 n))`` schedules for ``genetic_num_iters`` generations, so it scores
    about ``1.5 (genetic_num_iters + 1)`` schedules per candidate.
    """

    def __init__(self, population_size=96, init_measured_ratio=0.2, init_min_unmeasured=24,
                 max_fail_count=5, genetic_num_iters=2, genetic_mutate_prob=0.85,
                 genetic_max_fail_count=4, eps_greedy=0.05):
        super().__init__()
        if not 0 <= init_measured_ratio <= 1 or not 0 <= eps_greedy <= 1:
            raise ValueError("init_measured_ratio and eps_greedy must be in [0, 1]")
        self.population_size = int(population_size)
        self.init_measured_ratio = float(init_measured_ratio)
        self.init_min_unmeasured = int(init_min_unmeasured)
        self.max_fail_count = int(max_fail_count)
        self.genetic_num_iters = int(genetic_num_iters)
        self.genetic_mutate_prob = float(genetic_mutate_prob)
        self.genetic_max_fail_count = int(genetic_max_fail_count)
        self.eps_greedy = float(eps_greedy)

    def _reset(self):
        super()._reset()
        self._replayed = {}  # id(record) -> (record, (Schedule, hash) or None)

    @property
    def mutators(self):
        probs = getattr(self.context.space_generator, "mutator_probs", None) or {}
        return [(m, float(p)) for m, p in probs.items() if p > 0]

    # ---- population
    def _measured_population(self, count):
        """Replays of the best measured traces of the workload (with postprocessing redone;
        each record replayed once per search: the search never changes a schedule)."""
        if self.database is None or self.workload is None or count <= 0:
            return []
        out = []
        for record in self.database.get_top_k(self.workload, count):
            if id(record) not in self._replayed:
                self._replayed[id(record)] = (record, self._replay_record(record))
            replayed = self._replayed[id(record)][1]
            if replayed is not None:
                out.append(replayed)
        return out

    def _replay_record(self, record):
        try:
            trace = trace_from_json(record.trace_json)
        except ValueError:
            return None
        sch = replay(self.context.mod, trace, self.context.fork_seed(), self.postprocs,
                     failures=self.replay_failures)
        return None if sch is None else (sch, candidate_hash(sch))

    def _mutate(self, trace):
        """A child trace of ``trace`` from one mutator, or None."""
        rng = self.context.rng
        mutators = self.mutators
        if not mutators or rng.random() > self.genetic_mutate_prob:
            return None
        total = sum(p for _, p in mutators)
        x = rng.random() * total
        for mutator, p in mutators:
            x -= p
            if x <= 0:
                return mutator.apply(trace, rng)
        return mutators[-1][0].apply(trace, rng)

    def _scores(self, population):
        if self.cost_model is None:
            return [self.context.rng.random() for _ in population]
        candidates = []
        for sch, shash in population:
            candidate = MeasureCandidate(sch, self.args_info)
            candidate.candidate_hash = shash  # features of an equal kernel are reused
            candidates.append(candidate)
        return [float(s) for s in self.cost_model.predict(self.context, candidates)]

    def _evolve(self, population, seen, size):
        """Generations of mutation; every scored schedule goes into the returned pool."""
        rng = self.context.rng
        pool = {}
        for generation in range(self.genetic_num_iters + 1):
            if not population:
                break
            scores = self._scores(population)
            for (sch, shash), score in zip(population, scores):
                if shash not in self.measured:
                    pool[shash] = (score, sch)
            if generation == self.genetic_num_iters:
                break
            low = min(scores)
            weights = [s - low + 1e-6 for s in scores]
            children = []
            misses = 0
            for _ in range(size):
                if misses >= MAX_MISSES:
                    break  # the neighbourhood of this population is exhausted
                misses += 1
                for _attempt in range(self.genetic_max_fail_count):
                    parent = rng.choices(population, weights)[0][0]
                    trace = self._mutate(parent.trace)
                    if trace is None:
                        continue
                    sch = replay(self.context.mod, trace, self.context.fork_seed(),
                                 self.postprocs, failures=self.replay_failures)
                    if sch is None:
                        continue
                    shash = candidate_hash(sch)
                    if shash in seen:
                        continue
                    seen.add(shash)
                    children.append((sch, shash))
                    misses = 0
                    break
            population = children
        return pool

    def pick(self, count):
        # A small batch needs no big population: one and a half candidates per wanted
        # one (every member is replayed and lowered to be scored, in each generation: the
        # search's main cost).
        population = min(self.population_size, max(8, count + count // 2))
        seen = set()
        measured = self._measured_population(int(population * self.init_measured_ratio))
        for _, shash in measured:
            seen.add(shash)
        wanted = max(population - len(measured), min(self.init_min_unmeasured, population))
        fresh = self.sample_new(wanted, seen, wanted * self.max_fail_count)
        pool = self._evolve(measured + fresh, seen, population)
        ranked = sorted(pool.items(), key=lambda kv: -kv[1][0])
        num_random = int(round(count * self.eps_greedy))
        picked, taken = [], set()
        for shash, (_, sch) in ranked:
            if len(picked) >= count - num_random:
                break
            picked.append((sch, shash))
            taken.add(shash)
        for sch, shash in fresh:
            if len(picked) >= count:
                break
            if shash not in taken:
                picked.append((sch, shash))
                taken.add(shash)
        return picked
