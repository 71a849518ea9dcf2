"""rvm.meta_schedule.postproc: rewriting and checking candidates after their trace.

This package is a facade; the definitions live in its modules.
"""
from rvm.meta_schedule.postproc.disallow_dynamic_loop import DisallowDynamicLoop
from rvm.meta_schedule.postproc.postproc import Postproc, PyPostproc
from rvm.meta_schedule.postproc.rewrite_reduction_block import RewriteReductionBlock
from rvm.meta_schedule.postproc.rewrite_parallel_vectorize_unroll import (
    RewriteParallelVectorizeUnroll,
)

__all__ = ["DisallowDynamicLoop", "Postproc", "PyPostproc", "RewriteParallelVectorizeUnroll",
           "RewriteReductionBlock"]
