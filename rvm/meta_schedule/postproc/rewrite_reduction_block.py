"""RewriteReductionBlock: splits reduction inits off before the reduction loops."""
from rvm.meta_schedule.loop_analysis import REDUCTION, block_names
from rvm.meta_schedule.postproc.postproc import Postproc
from rvm.tir.schedule.analysis import loop_bound_iter_types


class RewriteReductionBlock(Postproc):
    """Splits the init of every reduction block off (``decompose_reduction``) just before
    its outermost reduction loop, so the accumulation loops start from an initialized tile."""

    def apply(self, sch):
        func = sch.mod[sch.func_working_on or "main"]
        for name in block_names(func):
            block = sch.get_block(name)
            if sch.get(block).init is None:
                continue
            realize = sch.get_sref(block).realize
            for loop in sch.get_loops(block):
                if REDUCTION in loop_bound_iter_types(realize, sch.get(loop).loop_var):
                    sch.decompose_reduction(block, loop)
                    break
        return True
