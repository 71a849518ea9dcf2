"""RewriteParallelVectorizeUnroll: the root block's annotations become loop kinds.

For every loop nest under the root: the outermost loops that are spatial for
every block under them are fused (a perfect nest: each the only statement of the
one before), as long as their extents multiply to at
most the ``meta_schedule.parallel`` limit (the first such loop of more than one
iteration is taken whatever its extent), and run in parallel, unless the target
has one core or the nest does too little work to pay for threads: fewer iterations than
the threshold of the default rule that schedules the kernel
(``rvm.dlight.parallel_threshold``: a matmul's, a conv's, a pool's... for a reduction
block, the general ``PARALLEL_MIN_WORK`` for an elementwise one; without a tune context,
or for a kernel no rule schedules, ``MATMUL_PARALLEL_MIN_WORK`` for a reduction), so that
a candidate threads where the default schedule it competes with does (measured in a loop
of calls, a tiny parallel kernel finds its threads awake and looks fast; in a model,
between other kernels or beside another process, every call wakes them); the
innermost loop, when spatial and within the ``meta_schedule.vectorize``
limit, becomes SIMD lanes; and the loops around it are unrolled, innermost
first, while the product of their extents stays within the sampled
``meta_schedule.unroll_explicit`` step (a register tile of 4 rows of
64-lane vectors unrolls with a step of 16). The annotations are removed.
"""
from rvm.dlight.analysis import MATMUL_PARALLEL_MIN_WORK, PARALLEL_MIN_WORK, work
from rvm.dlight.parallel_threshold import parallel_min_work
from rvm.dlight.target import CPUInfo
from rvm.ir.module import IRModule
from rvm.meta_schedule.layout_preproc import mark_layout_free
from rvm.meta_schedule.loop_analysis import SPATIAL, loop_types
from rvm.meta_schedule.postproc.postproc import Postproc
from rvm.meta_schedule.schedule_rule.parallel_vectorize_unroll import (
    PARALLEL, UNROLL_EXPLICIT, UNROLL_IMPLICIT, VECTORIZE,
)
from rvm.meta_schedule.tune_target import num_cores
from rvm.tir.schedule.analysis import const_extent, is_reduction_block
from rvm.tir.stmt import ForKind


def _spatial(sch, loop):
    return loop_types(sch, loop) <= {SPATIAL} and const_extent(sch.get(loop)) is not None


def _min_work(sch, block, reduction_min_work):
    """The iterations from which ``block``'s nest runs on threads: ``reduction_min_work``
    (the default rule's threshold) for a reduction block, the general threshold for an
    elementwise one."""
    if is_reduction_block(sch.get(block)):
        return reduction_min_work
    return PARALLEL_MIN_WORK


def default_min_work(context):
    """``(rule name, threshold)`` of the default rule of ``context``'s workload for its
    target (its constant inputs marked as the build marks them), or None."""
    func = mark_layout_free(context.mod["main"], getattr(context, "layout_free", ()))
    return parallel_min_work(IRModule({"main": func}), CPUInfo.from_target(context.target))


class RewriteParallelVectorizeUnroll(Postproc):
    """Turns the root's parallel/vectorize/unroll annotations into loop kinds.

    ``default_rule`` names the default rule of the tune context's workload (None without
    one) and ``reduction_min_work`` is its threshold, the one a reduction block uses."""

    default_rule = None
    reduction_min_work = MATMUL_PARALLEL_MIN_WORK

    def initialize_with_tune_context(self, context):
        super().initialize_with_tune_context(context)
        found = default_min_work(context) if context.mod is not None else None
        self.default_rule, self.reduction_min_work = found or (None, MATMUL_PARALLEL_MIN_WORK)

    def apply(self, sch):
        root = sch.get_block("root")
        ann = dict(sch.get(root).annotations)
        keys = [k for k in (PARALLEL, VECTORIZE, UNROLL_EXPLICIT, UNROLL_IMPLICIT) if k in ann]
        if not keys:
            return True
        for key in keys:
            sch.unannotate(root, key)
        max_parallel = int(ann.get(PARALLEL, 0))
        context = getattr(self, "context", None)
        if context is not None and num_cores(context.target) == 1:
            max_parallel = 0
        max_vector = int(ann.get(VECTORIZE, 0))
        unroll = int(ann.get(UNROLL_EXPLICIT, ann.get(UNROLL_IMPLICIT, 0)))
        for block in sch.get_child_blocks(root):
            loops = sch.get_loops(block)
            if not loops:
                continue
            threshold = _min_work(sch, block, self.reduction_min_work)
            if max_parallel > 1 and work(sch, loops) >= threshold:
                loops = self._parallelize(sch, block, loops, max_parallel)
            vectorized = self._vectorize(sch, loops, max_vector) if max_vector > 1 else None
            if unroll > 1:
                self._unroll(sch, loops, vectorized, unroll)
        return True

    @staticmethod
    def _parallelize(sch, block, loops, limit):
        if sch.get(loops[0]).kind != ForKind.SERIAL:
            return loops
        chosen, product = [], 1
        dtype = sch.get(loops[0]).loop_var.dtype
        for loop in loops:
            node = sch.get(loop)
            extent = const_extent(node)
            if node.kind != ForKind.SERIAL or not _spatial(sch, loop) or extent is None:
                break
            if node.loop_var.dtype != dtype:  # fuse needs one index type (int32 or int64)
                break
            if product > 1 and product * extent > limit:  # unit loops before do not count
                break
            if chosen and sch.get(chosen[-1]).body is not node:  # fuse needs a perfect nest
                break
            chosen.append(loop)
            product *= extent
        if product <= 1:
            return loops
        fused = sch.fuse(*chosen) if len(chosen) > 1 else chosen[0]
        sch.parallel(fused)
        return sch.get_loops(block)

    @staticmethod
    def _vectorize(sch, loops, limit):
        inner = loops[-1]
        node = sch.get(inner)
        extent = const_extent(node)
        if node.kind != ForKind.SERIAL or extent is None or not 1 < extent <= limit:
            return None
        if not _spatial(sch, inner):
            return None
        sch.vectorize(inner)
        return inner

    @staticmethod
    def _unroll(sch, loops, vectorized, limit):
        # The vector loop is one instruction per step: it does not count toward the limit.
        product = 1
        for loop in reversed(loops):
            if loop is vectorized:
                continue
            node = sch.get(loop)
            extent = const_extent(node)
            if node.kind == ForKind.UNROLLED and extent is not None:
                product *= extent  # unrolled by the schedule already (a register tile)
                continue
            if node.kind != ForKind.SERIAL or extent is None or product * extent > limit:
                return
            product *= extent
            if extent > 1:
                sch.unroll(loop)
