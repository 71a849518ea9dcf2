"""The search-strategy interface and what every strategy shares: the trial budget,
the resume rule, and turning traces into candidates.

A strategy is told the budget and the design spaces (``pre_tuning``), hands
out batches of candidates (``generate_measure_candidates``, None when done)
and hears back their measurements (``notify_runner_results``).

With the default space (its generator sets ``measures_default`` and
``measures_unscheduled``), the first batch starts with the kernel the build
would make without tuning (the rule-based default schedule, see
``default_schedule.py``) and the unscheduled kernel, so the best found is never
slower than either as measured. These baselines are handed out before any
sampled candidate, even by a search resumed with its budget spent.

Resume: the database's records of the workload count toward the budget
(those for the same target), and a candidate whose scheduled module is
structurally equal to one already recorded (measured or failed) is never
handed out again, so a second run on the same work_dir measures only new
candidates and a finished one measures nothing.
"""
import collections

from rvm.ir.base import structural_hash
from rvm.meta_schedule.arg_info import ArgInfo
from rvm.meta_schedule.default_schedule import default_schedule
from rvm.meta_schedule.measure_candidate import MeasureCandidate
from rvm.tir.schedule.schedule import Schedule
from rvm.tir.schedule.trace import Trace

# Replays in a row that give no new candidate before sampling gives up (the space is
# exhausted, or nearly: further draws would only repeat it).
MAX_MISSES = 24


def apply_postprocs(sch, postprocs):
    """Runs ``postprocs`` on ``sch`` (after an EnterPostproc mark); False if one rejects it."""
    sch.enter_postproc()
    for postproc in postprocs or ():
        if not postproc.apply(sch):
            return False
    return True


def replay(mod, trace, seed, postprocs, decision_provider=None, failures=None):
    """A fresh Schedule of ``mod`` with ``trace`` (its postprocessing removed) replayed and
    ``postprocs`` applied, or None when the trace or a postprocessor rejects it (the reason
    is counted in ``failures``, a Counter, when given)."""
    sch = Schedule(mod, seed=seed)
    try:
        trace.apply_to_schedule(sch, remove_postproc=True, decision_provider=decision_provider)
        if not apply_postprocs(sch, postprocs):
            if failures is not None:
                failures["a postprocessor rejected the schedule"] += 1
            return None
    except (ValueError, TypeError, IndexError, KeyError, RuntimeError) as err:
        # ScheduleError is a ValueError: a decision that does not fit, an illegal step.
        if failures is not None:
            failures[f"{type(err).__name__}: {str(err).splitlines()[0][:200]}"] += 1
        return None
    return sch


def without_decisions(trace):
    """``trace`` minus its postprocessing and every decision (replaying it samples anew)."""
    insts = []
    for inst in trace.insts:
        if inst.kind.name == "EnterPostproc":
            break
        insts.append(inst)
    return Trace(insts, {})


def candidate_hash(sch):
    """The identity of a candidate: the structural hash of its scheduled module."""
    return structural_hash(sch.mod)


class SearchStrategy:
    """Base class of search strategies."""

    def __init__(self):
        self.context = None
        self._reset()

    def _reset(self):
        self.max_trials = 0
        self.num_trials_per_iter = 0
        self.design_spaces = []
        self.database = None
        self.cost_model = None
        self.workload = None
        self.measured = set()
        self.trials = 0
        self.args_info = []
        self.baselines = []
        self.default_hash = None  # the candidate hash of the default schedule, if any
        self.replay_failures = collections.Counter()

    def initialize_with_tune_context(self, context):
        """Binds the strategy to ``context``."""
        self.context = context

    @property
    def postprocs(self):
        return getattr(self.context.space_generator, "postprocs", None) or ()

    def pre_tuning(self, max_trials, num_trials_per_iter, design_spaces, database=None,
                   cost_model=None):
        """Starts a search: ``max_trials`` measurements in batches of ``num_trials_per_iter``."""
        if int(max_trials) < 0 or int(num_trials_per_iter) < 1:
            raise ValueError(f"expected max_trials >= 0 and num_trials_per_iter >= 1, got "
                             f"{max_trials} and {num_trials_per_iter}")
        self._reset()
        self.max_trials = int(max_trials)
        self.num_trials_per_iter = int(num_trials_per_iter)
        self.design_spaces = [sch.trace for sch in design_spaces]
        self.database = database
        self.cost_model = cost_model
        self.args_info = ArgInfo.from_entry_func(self.context.mod)
        if database is not None:
            self.workload = database.commit_workload(self.context.mod)
            target = str(self.context.target)
            for record in database.records_of(self.workload):
                if record.candidate_hash is not None:
                    self.measured.add(record.candidate_hash)
                if record.target == target:
                    self.trials += 1
        self.baselines = self._baselines()

    def _baselines(self):
        """The (Schedule, hash) pairs measured first: the default schedule, then the
        unscheduled kernel (as the space generator asks), those not measured yet."""
        generator = self.context.space_generator
        out = []
        if getattr(generator, "measures_default", False):
            sch = default_schedule(self.context.mod, self.context.target,
                                   getattr(self.context, "layout_free", ()))
            if sch is not None:
                out.append(sch)
                self.default_hash = candidate_hash(sch)
        if getattr(generator, "measures_unscheduled", False):
            out.append(Schedule(self.context.mod, seed=self.context.fork_seed()))
        pairs = []
        for sch in out:
            shash = candidate_hash(sch)
            if shash not in self.measured and all(shash != h for _, h in pairs):
                pairs.append((sch, shash))
        return pairs

    @property
    def remaining(self):
        """Measurements left in the budget (the baselines not measured yet count as one
        each even when it is spent)."""
        return max(len(self.baselines), self.max_trials - self.trials)

    def generate_measure_candidates(self, limit=None):
        """The next batch (MeasureCandidates with a ``candidate_hash``), or None when done;
        ``limit`` caps its size (a global budget shared by several tasks)."""
        count = min(self.num_trials_per_iter, self.remaining)
        if limit is not None:
            count = min(count, int(limit))
        count = max(count, len(self.baselines))
        if count <= 0:
            return None
        schedules, self.baselines = self.baselines, []
        if count > len(schedules):
            schedules.extend(self.pick(count - len(schedules)))
        if not schedules:
            return None
        candidates = []
        for sch, shash in schedules:
            candidate = MeasureCandidate(sch, self.args_info)
            candidate.candidate_hash = shash
            candidates.append(candidate)
        return candidates

    def pick(self, count):
        """Up to ``count`` new (Schedule, candidate hash) pairs, none measured before."""
        raise NotImplementedError

    def notify_runner_results(self, measure_candidates, results):
        """Counts the measurements against the budget."""
        self.trials += len(measure_candidates)
        for candidate in measure_candidates:
            self.measured.add(candidate.candidate_hash)

    def post_tuning(self):
        """Ends the search."""

    # ---- shared sampling
    def sample_new(self, count, seen, max_attempts):
        """Up to ``count`` (Schedule, hash) pairs sampled afresh from the design spaces,
        whose hashes are in neither ``self.measured`` nor ``seen`` (which is extended).
        Gives up after ``max_attempts`` replays, or ``MAX_MISSES`` in a row that found
        nothing new (a small space is exhausted: more draws only repeat it)."""
        rng = self.context.rng
        out = []
        attempts = misses = 0
        while len(out) < count and attempts < max_attempts and misses < MAX_MISSES \
                and self.design_spaces:
            attempts += 1
            misses += 1
            trace = without_decisions(rng.choice(self.design_spaces))
            sch = replay(self.context.mod, trace, self.context.fork_seed(), self.postprocs,
                         failures=self.replay_failures)
            if sch is None:
                continue
            if self.admit(sch, seen, out):
                misses = 0
        return out

    def admit(self, sch, seen, out):
        """Adds ``(sch, its hash)`` to ``out`` unless it was measured or is in ``seen``;
        whether it did."""
        shash = candidate_hash(sch)
        if shash in self.measured or shash in seen:
            return False
        seen.add(shash)
        out.append((sch, shash))
        return True


class PySearchStrategy(SearchStrategy):
    """A search strategy written in Python by subclassing."""
