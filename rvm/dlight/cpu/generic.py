"""The generic CPU rule: elementwise/injective chains and row reductions.

Elementwise producers are inlined into their consumers first, so a fused
chain is one loop nest. Then, block by block:

- a spatial block whose iterations are independent (it writes no buffer it
  reads, at indices made of its own axes: not a scatter): its last loop is
  the vector loop (split by ``VECTOR_REGS`` vector registers when longer or
  symbolic, the tail guarded by a predicate), every loop above it is fused into
  one (``fuse_or_first``: not across a symbolic extent), which runs in parallel
  when the nest's work reaches ``PARALLEL_MIN_WORK`` and the CPU has cores;
- a reduction block (output indexed by its spatial axes) whose reduction loops
  are innermost (softmax's max and sum, layer norm's moments,
  ``sum``/``mean``/``max`` over trailing axes): its outermost spatial loop
  longer than 1 runs in parallel above the same threshold; the reduction loop
  is left to LocalizeReduction, which keeps the accumulator in a register and
  marks the loop as a SIMD reduction.

Blocks of any other shape are left as they are; the rule applies when it
scheduled at least one block.
"""
from rvm.dlight.analysis import (
    PARALLEL_MIN_WORK, SPATIAL, calls_libm, extent_of, inline_producers, loop_kinds,
    parallel_outer, work, write_dtype,
)
from rvm.dlight.rule import ScheduleRule
from rvm.tir.expr import BufferLoad, Div, IntImm, Var
from rvm.tir.free_vars import used_vars
from rvm.tir.schedule.analysis import const_extent, is_complete_block, is_reduction_block
from rvm.tir.schedule.primitive.partition_rows import (
    nest_block, partition_innermost_func, top_nests,
)
from rvm.tir.stmt_functor import post_order_visit

# The innermost vector loop covers up to this many vector registers.
VECTOR_REGS = 4


def has_load(expr):
    """True when ``expr`` reads memory."""
    found = []
    post_order_visit(expr, lambda node: found.append(node) if isinstance(node, BufferLoad)
                     else None)
    return bool(found)


def divides_floats(block):
    """True when the block's body divides floating-point values (softmax's normalization):
    under a predicate the C compiler leaves such a vector loop scalar, since a masked-off
    lane could trap."""
    found = []
    post_order_visit(block.body, lambda node: found.append(node)
                     if isinstance(node, Div) and str(node.dtype).startswith("float") else None)
    return bool(found)


def writes_by_axes(block):
    """True when the block writes no buffer it reads, at indices made of its own axes only
    (no loaded index, as a scatter has): its iterations then never write one element twice
    or read another's result, so they may run in any order (threads, SIMD lanes)."""
    if not is_complete_block(block):
        return False
    axes = {id(iv.var) for iv in block.iter_vars}
    return all(set(used_vars(r.min)) <= axes and not has_load(r.min)
               for region in block.writes for r in region.region)


def schedule_spatial(sch, block, info):
    loops = sch.get_loops(block)
    if not loops or not writes_by_axes(sch.get(block)):
        return False
    lanes = info.lanes(write_dtype(sch, block))
    total = work(sch, loops)
    *outer, last = loops
    width = lanes * VECTOR_REGS
    if not _starts_at_zero(sch.get(last)):
        # the remainder of a partitioned axis (prepare): fewer than a vector, one at a time
        parallel_outer(sch, outer, total, info)
        return True
    factor = vector_factor(sch.get(last), lanes, width, contiguous_run(sch.get(block), lanes))
    if const_extent(sch.get(last)) is None or extent_of(sch, last) > factor:
        # a symbolic last axis (attention scores over the sequence) too: a vector loop
        # has a constant extent
        rest, last = sch.split(last, [None, factor])
        outer.append(rest)
    parallel_outer(sch, outer, total, info)
    sch.vectorize(last)
    return True


def contiguous_run(block, lanes):
    """The elements of the innermost axis a load of ``block`` reads in a row at most, when a
    load's last index is a function of that axis other than the axis itself (a transpose's
    ``x[.., v // 32, .., v % 32]`` reads runs of its last dimension, 32): the smallest such
    constant last dimension of at least ``lanes``, else None."""
    last = block.writes[0].region[-1].min if block.writes and block.writes[0].region else None
    if not isinstance(last, Var):
        return None
    runs = []

    def visit(node):
        if isinstance(node, BufferLoad) and node.indices:
            index, dim = node.indices[-1], node.buffer.shape[-1]
            if index is not last and id(last) in used_vars(index) \
                    and isinstance(dim, IntImm) and dim.value >= lanes:
                runs.append(dim.value)

    post_order_visit(block.body, visit)
    return min(runs) if runs else None


def vector_factor(loop, lanes, width, run=None):
    """The extent of the vector loop split off ``loop``: the largest multiple of ``lanes`` up
    to ``width`` that divides ``run`` (a vector inside a transpose's contiguous runs) when a
    run is given; else ``width``, unless it leaves a tail (a predicate on every iteration,
    which also hides the index's range from the simplifier) and a multiple of ``lanes`` up
    to ``2 * width`` divides the constant extent (784 = 7 * 112: seven vectors of 16
    lanes)."""
    if run is not None:
        for factor in range(min(run, width) // lanes * lanes, lanes - 1, -lanes):
            if run % factor == 0:
                return factor
    extent = const_extent(loop)
    if extent is None or extent % width == 0:
        return width
    for factor in range(2 * width - 2 * width % lanes, lanes - 1, -lanes):
        if extent % factor == 0:
            return factor
    return width


def _starts_at_zero(loop):
    return getattr(loop.min, "value", None) == 0


def schedule_row_reduction(sch, block, info):
    kinds = loop_kinds(sch, block)
    if None in kinds or "R" not in kinds:
        return False
    first_r = kinds.index("R")
    if "S" in kinds[first_r:]:
        return False  # a spatial loop inside the reduction: not a row reduction
    if not is_reduction_block(sch.get(block)):
        return False
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

    def prepare(self, sch, info):
        """Each top-level spatial nest that calls a libm function or divides floats over a
        symbolic innermost axis (softmax's exp and normalization over the sequence) split
        into full vectors and a remainder (``sch.partition_innermost``, a traced primitive):
        a predicated vector loop cannot call the functions' vector forms, which have no
        masked variant, and is not vectorized at all when it divides."""
        nests = top_nests(sch.mod["main"])
        for index in reversed(range(len(nests))):
            block = nest_block(nests[index])
            if block is None or block.init is not None \
                    or not (calls_libm(block) or divides_floats(block)) \
                    or any(iv.iter_type != SPATIAL for iv in block.iter_vars):
                continue
            width = info.lanes(block.writes[0].buffer.dtype) * VECTOR_REGS
            if partition_innermost_func(sch.mod["main"], index, width) is not None:
                sch.partition_innermost(index, width)
        return True

    def apply(self, sch, info):
        done = False
        for block in inline_producers(sch):
            kinds = {iv.iter_type for iv in sch.get(block).iter_vars}
            if kinds == {SPATIAL}:
                done = schedule_spatial(sch, block, info) or done
            elif sch.get(block).init is not None:
                done = schedule_row_reduction(sch, block, info) or done
        return done
