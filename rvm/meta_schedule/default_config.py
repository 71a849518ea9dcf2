"""The default schedule rules, postprocessors and mutators of a target (all CPU targets).

>>> [type(r).__name__ for r in schedule_rules(None)]
['AutoInline', 'MultiLevelTiling', 'ParallelizeVectorizeUnroll']
"""
from rvm.meta_schedule.mutator.mutate_compute_location import MutateComputeLocation
from rvm.meta_schedule.mutator.mutate_parallel import MutateParallel
from rvm.meta_schedule.mutator.mutate_tile_size import MutateTileSize
from rvm.meta_schedule.mutator.mutate_unroll import MutateUnroll
from rvm.meta_schedule.postproc.disallow_dynamic_loop import DisallowDynamicLoop
from rvm.meta_schedule.postproc.rewrite_reduction_block import RewriteReductionBlock
from rvm.meta_schedule.postproc.rewrite_parallel_vectorize_unroll import (
    RewriteParallelVectorizeUnroll,
)
from rvm.meta_schedule.schedule_rule.auto_inline import AutoInline
from rvm.meta_schedule.schedule_rule.multi_level_tiling import MultiLevelTiling
from rvm.meta_schedule.schedule_rule.parallel_vectorize_unroll import ParallelizeVectorizeUnroll


def schedule_rules(target):
    """Inline elementwise blocks, tile reductions (register tiles; vector accumulators
    when operands are contiguous along the reduction), then parallelize/vectorize/unroll."""
    return [
        AutoInline(into_producer=False, into_consumer=True),
        # Packed panels (pack_reads=True) are left out: their copy is redone for every outer
        # row tile, so most samples are slow and they take trials from the plain spaces.
        MultiLevelTiling(structure="SSRSRS", max_innermost_factor=64, pack_reads=False),
        ParallelizeVectorizeUnroll(max_jobs_per_core=16, max_vectorize_extent=64,
                                   unroll_max_steps=[0, 16, 64], unroll_explicit=True),
    ]


def postprocs(target):
    """Reject symbolic loops, apply the loop kinds, split reduction inits off."""
    return [DisallowDynamicLoop(), RewriteParallelVectorizeUnroll(), RewriteReductionBlock()]


def mutator_probs(target):
    """Mostly tile sizes, sometimes the unroll step, rarely parallelism or compute location."""
    return {MutateTileSize(): 0.9, MutateComputeLocation(): 0.05, MutateUnroll(): 0.03,
            MutateParallel(): 0.02}
