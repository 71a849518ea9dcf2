"""The generic CPU rule: elementwise/injective chains and row reductions.

Elementwise producers are inlined into their consumers first, so a fused
chain is one loop nest. Then, block by block:

- a spatial block: its last loop is the vector loop (split by
  ``VECTOR_REGS`` vector registers when longer, the tail guarded by a
  predicate), every loop above it is fused into one, which runs in parallel
  when the nest's work reaches ``PARALLEL_MIN_WORK`` and the CPU has cores;
- a reduction block whose reduction loops are innermost (softmax's max and
  sum, layer norm's moments, ``sum``/``mean``/``max`` over trailing axes): its
  outermost spatial loop longer than 1 runs in parallel above the same
  threshold; the
  reduction loop is left to LocalizeReduction, which keeps the accumulator in
  a register and marks the loop as a SIMD reduction.

Blocks of any other shape are left as they are; the rule applies when it
scheduled at least one block.
"""
from rvm.dlight.analysis import (
    PARALLEL_MIN_WORK, SPATIAL, extent_of, inline_producers, loop_kinds, parallel_outer, work,
    write_dtype,
)
from rvm.dlight.rule import ScheduleRule

# The innermost vector loop covers up to this many vector registers.
VECTOR_REGS = 4


def schedule_spatial(sch, block, info):
    loops = sch.get_loops(block)
    if not loops:
        return False
    lanes = info.lanes(write_dtype(sch, block))
    total = work(sch, loops)
    *outer, last = loops
    width = lanes * VECTOR_REGS
    if extent_of(sch, last) > width:
        rest, last = sch.split(last, [None, width])
        outer.append(rest)
    parallel_outer(sch, outer, total, info)
    sch.vectorize(last)
    return True


def schedule_row_reduction(sch, block, info):
    kinds = loop_kinds(sch, block)
    if None in kinds or "R" not in kinds:
        return False
    first_r = kinds.index("R")
    if "S" in kinds[first_r:]:
        return False  # a spatial loop inside the reduction: not a row reduction
    loops = sch.get_loops(block)
    wide = [loop for loop in loops[:first_r] if extent_of(sch, loop) > 1]
    if wide and info.cores > 1 and work(sch, loops) >= PARALLEL_MIN_WORK:
        # One loop, not a fused one: a fused index (i // n, i % n) hides the unit stride
        # LocalizeReduction needs to make the reduction loop a SIMD reduction.
        sch.parallel(wide[0])
    return True


class Generic(ScheduleRule):
    """Schedules elementwise chains and row reductions (module docstring)."""

    name = "generic"

    def apply(self, sch, info):
        done = False
        for block in inline_producers(sch):
            kinds = {iv.iter_type for iv in sch.get(block).iter_vars}
            if kinds == {SPATIAL}:
                done = schedule_spatial(sch, block, info) or done
            elif sch.get(block).init is not None:
                done = schedule_row_reduction(sch, block, info) or done
        return done
