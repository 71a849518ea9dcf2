"""ParallelizeVectorizeUnroll: decides how much parallelism, SIMD and unrolling to ask for.

The rule annotates the root block with the limits the postprocessor
RewriteParallelVectorizeUnroll turns into loop kinds: the largest parallel
extent, the longest vector loop, and the largest unrolled step, sampled from
``unroll_max_steps`` (a decision the search varies, MutateUnroll). On a
multi-core target the parallel extent is sampled too (MutateParallel varies
it): ``max_jobs_per_core`` times the cores, or 1 (one thread), since a kernel
of a few microseconds, or one on a busy machine, loses more to forking and
joining threads than it gains from them.
"""
from rvm.meta_schedule.schedule_rule.schedule_rule import ScheduleRule
from rvm.meta_schedule.tune_target import num_cores

PARALLEL = "meta_schedule.parallel"
VECTORIZE = "meta_schedule.vectorize"
UNROLL_EXPLICIT = "meta_schedule.unroll_explicit"
UNROLL_IMPLICIT = "meta_schedule.unroll_implicit"


class ParallelizeVectorizeUnroll(ScheduleRule):
    """Annotates the root block once (TVM's parameters; -1 disables a part)."""

    def __init__(self, max_jobs_per_core=16, max_vectorize_extent=64,
                 unroll_max_steps=(0, 16, 64, 512), unroll_explicit=True):
        self.max_jobs_per_core = int(max_jobs_per_core)
        self.max_vectorize_extent = int(max_vectorize_extent)
        self.unroll_max_steps = list(unroll_max_steps)
        self.unroll_explicit = unroll_explicit
        self.context = None

    def apply(self, sch, block):
        root = sch.get_block("root")
        if PARALLEL in sch.get(root).annotations:
            return [sch]
        cores = num_cores(self.context.target) if self.context is not None else 1
        if self.max_jobs_per_core != -1:
            jobs = self.max_jobs_per_core * max(1, cores)
            if jobs > 1 and cores > 1:
                jobs = sch.sample_categorical([1, jobs], [0.5, 0.5])
            sch.annotate(root, PARALLEL, jobs)
        if self.max_vectorize_extent != -1:
            sch.annotate(root, VECTORIZE, self.max_vectorize_extent)
        if self.unroll_max_steps:
            n = len(self.unroll_max_steps)
            step = sch.sample_categorical(self.unroll_max_steps, [1.0 / n] * n)
            sch.annotate(root, UNROLL_EXPLICIT if self.unroll_explicit else UNROLL_IMPLICIT,
                         step)
        return [sch]
