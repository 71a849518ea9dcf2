"""rvm.meta_schedule.postproc: rewriting and checking candidates after their trace.

This package is a facade; the definitions live in its modules.
"""
from rvm.meta_schedule.postproc.postproc import (
    DisallowDynamicLoop, Postproc, PyPostproc, RewriteReductionBlock,
)
from rvm.meta_schedule.postproc.rewrite_parallel_vectorize_unroll import (
    RewriteParallelVectorizeUnroll,
)

__all__ = ["DisallowDynamicLoop", "Postproc", "PyPostproc", "RewriteParallelVectorizeUnroll",
           "RewriteReductionBlock"]
