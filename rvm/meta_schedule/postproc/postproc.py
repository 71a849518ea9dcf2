"""Postprocessors: run on every candidate after its trace, before it is built.

``apply(sch) -> bool``: rewrites ``sch`` (recorded in its trace after the
EnterPostproc mark) and says whether the candidate is valid.
"""


class Postproc:
    """Base class of postprocessors."""

    def initialize_with_tune_context(self, context):
        """Binds the postprocessor to a tune context (its target)."""
        self.context = context

    def apply(self, sch):
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}()"


class PyPostproc(Postproc):
    """A postprocessor written in Python by subclassing."""


class DisallowDynamicLoop(Postproc):
    """Rejects candidates with a loop of symbolic extent."""

    def apply(self, sch):
        from rvm.tir.stmt import For
        from rvm.tir.stmt_functor import post_order_visit
        from rvm.tir.expr import IntImm

        found = []
        func = sch.mod[sch.func_working_on or "main"]
        post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, For)
                         and not isinstance(n.extent, IntImm) else None)
        return not found


class RewriteReductionBlock(Postproc):
    """Splits the init of every reduction block off (``decompose_reduction``) just before
    its outermost reduction loop, so the accumulation loops start from an initialized tile."""

    def apply(self, sch):
        from rvm.meta_schedule.loop_analysis import REDUCTION, iter_types_of_loop, realize_of
        from rvm.meta_schedule.space_generator.post_order_apply import block_names

        func = sch.mod[sch.func_working_on or "main"]
        for name in block_names(func):
            block = sch.get_block(name)
            if sch.get(block).init is None:
                continue
            realize = realize_of(sch, block)
            for loop in sch.get_loops(block):
                if REDUCTION in iter_types_of_loop(realize, sch.get(loop).loop_var):
                    sch.decompose_reduction(block, loop)
                    break
        return True
