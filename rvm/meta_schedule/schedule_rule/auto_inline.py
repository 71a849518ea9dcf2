"""AutoInline: elementwise blocks are inlined into their consumers (or producers).

A spatial block whose buffer is an intermediate (bias add, relu feeding a
next op) costs a pass over memory; inlined into its consumer
(``compute_inline``) its value is computed where it is used. With
``into_producer``, a spatial consumer is folded into its producer instead
(``reverse_compute_inline``). The primitives check legality; a block they
refuse is left as it is.
"""
from rvm.meta_schedule.loop_analysis import is_spatial_block
from rvm.meta_schedule.schedule_rule.schedule_rule import ScheduleRule, schedule_errors


class AutoInline(ScheduleRule):
    """Inlines spatial blocks (TVM's parameter names; the primitives decide legality)."""

    def __init__(self, into_producer=False, into_consumer=True, inline_const_tensor=True,
                 disallow_if_then_else=True, require_injective=True, require_ordered=True,
                 disallow_op=None):
        self.into_producer = into_producer
        self.into_consumer = into_consumer
        self.disallow_if_then_else = disallow_if_then_else

    def apply(self, sch, block):
        blk = sch.get(block)
        if not is_spatial_block(blk) or blk.init is not None:
            return [sch]
        if self.disallow_if_then_else and "if_then_else" in repr(blk.body):
            return [sch]
        if self.into_consumer:
            try:
                sch.compute_inline(block)
                return [sch]
            except schedule_errors():
                pass
        if self.into_producer:
            try:
                sch.reverse_compute_inline(block)
            except schedule_errors():
                pass
        return [sch]
