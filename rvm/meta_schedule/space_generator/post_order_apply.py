"""PostOrderApply: the default design space, schedule rules applied block by block.

The blocks of the workload are visited from the last to the first (so a
consumer is handled, for instance inlined, before the producer it reads
from is tiled), and every schedule rule is applied to each block; a rule
may branch into several schedules, so the result is a list of design
spaces. Rules are ScheduleRule objects (``ms.schedule_rule``).
"""
from rvm.meta_schedule.loop_analysis import block_names
from rvm.meta_schedule.space_generator.space_generator import FROM_TARGET, SpaceGenerator
from rvm.tir.schedule.error import ScheduleError


class PostOrderApply(SpaceGenerator):
    """Applies ``sch_rules`` to every block, last block first.

    ``f_block_filter(block) -> bool`` (on the Block node) limits the blocks.
    The search also measures the default schedule (``measures_default``) and the
    unscheduled kernel (``measures_unscheduled``).
    """

    measures_default = True
    measures_unscheduled = True

    def __init__(self, f_block_filter=None, sch_rules=FROM_TARGET, postprocs=FROM_TARGET,
                 mutator_probs=FROM_TARGET):
        super().__init__(sch_rules, postprocs, mutator_probs)
        self.f_block_filter = f_block_filter

    def generate_design_space(self, mod):
        root = self._new_schedule(mod)
        names = block_names(root.mod[root.func_working_on or "main"])
        states = [(root, len(names))]
        done = []
        while states:
            sch, remaining = states.pop()
            if remaining == 0:
                done.append(sch)
                continue
            name = names[remaining - 1]
            try:
                block = sch.get_block(name)
            except (ScheduleError, ValueError):  # an earlier rule removed it (inlined)
                states.append((sch, remaining - 1))
                continue
            if self.f_block_filter is not None and not self.f_block_filter(sch.get(block)):
                states.append((sch, remaining - 1))
                continue
            current = [sch]
            for rule in self.sch_rules or ():
                branched = []
                for s in current:
                    try:
                        s.get(block)
                    except (ScheduleError, ValueError):
                        branched.append(s)
                        continue
                    branched.extend(rule.apply(s, block))
                current = branched
            for s in reversed(current):
                states.append((s, remaining - 1))
        return done
