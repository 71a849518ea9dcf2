"""DisallowDynamicLoop: rejects candidates with a loop of symbolic extent."""
from rvm.meta_schedule.postproc.postproc import Postproc
from rvm.tir.expr import IntImm
from rvm.tir.stmt import For
from rvm.tir.stmt_functor import post_order_visit


class DisallowDynamicLoop(Postproc):
    """Rejects candidates with a loop of symbolic extent."""

    def apply(self, sch):
        found = []
        func = sch.mod[sch.func_working_on or "main"]
        post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, For)
                         and not isinstance(n.extent, IntImm) else None)
        return not found
