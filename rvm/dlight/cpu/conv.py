"""The CPU window rule: convolutions and pooling (reductions over a window of an input).

Applies to a kernel whose one reduction block has several reduction loops, all inside
its spatial loops (``conv2d`` NCHW ``n, f, y, x, rc, ry, rx`` and NHWC ``n, y, x, f, ry,
rx, rc``, grouped and depthwise ones, ``pool2d`` ``n, c, y, x, ry, rx``), optionally
after elementwise producers that are not inlined (the padded input, computed once per
call rather than tested at every multiply) and before an elementwise epilogue (bias,
activation: inlined into the write-back). The loops become

    for (spatial loops but i and j, i_o, j_o)   (the first two fused; parallel from
                                                 WINDOW_PARALLEL_MIN_WORK, a pool's
                                                 from POOL_PARALLEL_MIN_WORK, a
                                                 depthwise or grouped conv's from
                                                 GROUPED_PARALLEL_MIN_WORK)
        acc[rows, width] = init                     (vectorized over width)
        for r.. (the reduction loops, in order):
            for j_i in vectorized(width):
                for i_i in unroll(rows):            acc += in[..] * w[..]
        out[..] = epilogue(acc)

``j`` is the innermost spatial loop (the output's contiguous axis: x in NCHW, the
channel in NHWC) and ``i`` the spatial loop nearest it whose axis an operand read
along ``j`` does not use, so one vector load of that operand feeds ``rows`` FMAs
(NCHW: the output channel, the input vector shared; NHWC: x, the weight vector
shared); ``(rows, width)`` is the matmul rule's ``tile_shape``. A pooling window has
no such operand: ``rows`` is 1, and a pool may put its window inside the vector loop
instead (rvm/dlight/cpu/pool.py: windows tiling the input row, or rows of columns that are
not whole half-vectors). The rule leaves kernels whose ``j`` is shorter than MIN_WIDTH, or
POOL_MIN_WIDTH for a pool (a global pool's 1 x 1 output: the generic rule's row reduction
fits it).
"""
from rvm.dlight.analysis import (
    GROUPED_PARALLEL_MIN_WORK, PAD_PARALLEL_MIN_WORK, POOL_PARALLEL_MIN_WORK, SPATIAL,
    WINDOW_PARALLEL_MIN_WORK, extent_of, loop_kinds, parallel_outer, top_blocks, work,
    write_dtype,
)
from rvm.dlight.cpu.generic import writes_by_axes
from rvm.dlight.cpu.matmul import tile_shape
from rvm.dlight.cpu.pool import pool_order
from rvm.dlight.rule import ScheduleRule
from rvm.tir.free_vars import used_vars
from rvm.tir.schedule.analysis import const_extent, is_reduction_block

MIN_WIDTH = 8
# A pool has no row loop to fill a tile with, and the generic rule's row reduction over its
# short window runs one output at a time: a vector of 7 columns measured faster (the CNN's
# 2 x 2 pool of 64 x 16 x 14 x 14 to 7 x 7: 0.089 -> 0.063 ms on one core).
POOL_MIN_WIDTH = 4


def axis_vars(sch, block, loop):
    """ids of the block axes the loop feeds."""
    blk, realize = sch.get(block), sch.get_sref(block).realize
    var = sch.get(loop).loop_var
    return {id(iv.var) for iv, v in zip(blk.iter_vars, realize.iter_values)
            if id(var) in used_vars(v)}


def _row_loop(sch, block, spatial, j):
    """The spatial loop nearest ``j`` whose axes some read along ``j``'s axis does not use."""
    j_axes = axis_vars(sch, block, j)
    reads = [{v for r in region.region for v in used_vars(r.min)}
             for region in sch.get(block).reads]
    along_j = [used for used in reads if used & j_axes]
    for loop in reversed(spatial):
        axes = axis_vars(sch, block, loop)
        if const_extent(sch.get(loop)) not in (None, 1) and axes \
                and any(not (axes & used) for used in along_j):
            return loop
    return None


def schedule_pad(sch, block, info=None):
    """Vectorizes the innermost loop of a producer of the window's input (the padded input),
    its other loops left unfused: the C backend range-checks each load of the input under
    the padding's condition, and with plain loop indices that check is a few additions
    instead of the floormods of a fused index (ResNet 7 x 7 conv at a symbolic batch 8: 1.16
    -> 0.95 ms on one core). From PAD_PARALLEL_MIN_WORK elements, and with ``info`` giving
    cores, its outermost loop longer than 1 (the batch, else the channels) runs on threads.
    A block that is not elementwise is left as it is."""
    loops = sch.get_loops(block)
    if not loops or not writes_by_axes(sch.get(block)):
        return
    sch.vectorize(loops[-1])
    outer = next((loop for loop in loops[:-1] if extent_of(sch, loop) > 1), None)
    if outer is not None and info is not None and info.cores > 1 \
            and work(sch, loops) >= PAD_PARALLEL_MIN_WORK:
        sch.parallel(outer)


def one_reduction(sch):
    """``(blocks, index)``: ``sch``'s top-level blocks and the index of the one reduction
    block among them, which writes one buffer after blocks that are all spatial (pads,
    copies); None for any other kernel."""
    blocks = top_blocks(sch)
    found = [k for k, b in enumerate(blocks) if sch.get(b).init is not None]
    if len(found) != 1:
        return None
    index = found[0]
    blk = sch.get(blocks[index])
    if not is_reduction_block(blk) or len(blk.writes) != 1:
        return None
    if any(any(iv.iter_type != SPATIAL for iv in sch.get(b).iter_vars)
           for b in blocks[:index]):
        return None
    return blocks, index


def inline_epilogue(sch, blocks, index):
    """Inlines the elementwise blocks after ``blocks[index]`` but the last into their
    consumers; returns False when one is not elementwise."""
    for block in blocks[index + 1:]:
        if any(iv.iter_type != SPATIAL for iv in sch.get(block).iter_vars):
            return False
    for block in blocks[index + 1:-1]:
        sch.compute_inline(block)
    return True


class Window(ScheduleRule):
    """Register-tiles convolutions and pooling (module docstring)."""

    name = "window"

    def apply(self, sch, info):
        found = one_reduction(sch)
        if found is None:
            return False
        blocks, index = found
        conv = blocks[index]
        loops = sch.get_loops(conv)
        kinds = loop_kinds(sch, conv)
        if None in kinds or kinds.count("R") < 2 or "R" in kinds[:kinds.index("R")] \
                or "S" in kinds[kinds.index("R"):]:
            return False
        first_r = kinds.index("R")
        spatial, reduction = loops[:first_r], loops[first_r:]
        if not spatial:
            return False
        pool = _row_loop(sch, conv, spatial[:-1], spatial[-1]) is None
        if (const_extent(sch.get(spatial[-1])) or 0) < (POOL_MIN_WIDTH if pool else MIN_WIDTH):
            return False
        if not inline_epilogue(sch, blocks, index):
            return False
        for pad in blocks[:index]:
            schedule_pad(sch, pad, info)
        return _schedule(sch, conv, spatial, reduction, info)


def _schedule(sch, conv, spatial, reduction, info):
    j = spatial[-1]
    i = _row_loop(sch, conv, spatial[:-1], j)
    lanes = info.lanes(write_dtype(sch, conv))
    total = work(sch, spatial + reduction)
    rows, width = tile_shape(None if i is None else const_extent(sch.get(i)),
                             extent_of(sch, j), lanes)
    order = pool_order(sch, conv, j, reduction[-1], width, lanes) \
        if i is None and _reads_one_input(sch.get(conv)) else None
    j_o, j_i = sch.split(j, [None, width])
    outer = [j_o if loop is j else loop for loop in spatial]
    if order is not None:
        order(sch, conv, outer, reduction, j_i)
        parallel_outer(sch, outer[:2], total, info, POOL_PARALLEL_MIN_WORK)
        return True
    if i is not None:
        i_o, i_i = sch.split(i, [None, rows])
        outer = [i_o if loop is i else loop for loop in outer]
        sch.reorder(*outer, *reduction, j_i, i_i)
        sch.unroll(i_i)
    else:
        sch.reorder(*outer, *reduction, j_i)
    acc = sch.cache_write(conv, 0, "local")
    for consumer in sch.get_consumers(acc):
        sch.reverse_compute_inline(consumer)
    sch.reverse_compute_at(acc, outer[-1])
    init = sch.decompose_reduction(conv, reduction[0])
    init_loops = sch.get_loops(init)
    if i is not None:
        sch.reorder(init_loops[-1], init_loops[-2])  # rows outside, the vector loop inside
    sch.vectorize(sch.get_loops(init)[-1])
    sch.vectorize(j_i)
    sch.vectorize(sch.get_loops(acc)[-1])
    # Threads over the first two loops only: a loop fused from three or more indexes the
    # middle ones by a floormod of the fused index, which the C backend's bounds prover
    # does not follow (every access of the window range-checked) and which kept gcc from
    # vectorizing inside OpenMP's outlined function.
    parallel_outer(sch, outer[:2], total, info, _parallel_min_work(sch.get(conv), i))
    return True


def _reads_one_input(block):
    """True when ``block`` reads one buffer besides its accumulator (a pool, not a conv)."""
    out = block.writes[0].buffer
    return len({id(region.buffer) for region in block.reads if region.buffer is not out}) == 1


def _parallel_min_work(block, row_loop):
    """The work from which the window's outer loop runs on threads: a tile of rows, a pool
    (one buffer read besides the accumulator), or a depthwise or grouped conv (analysis.py)."""
    if row_loop is not None:
        return WINDOW_PARALLEL_MIN_WORK
    return POOL_PARALLEL_MIN_WORK if _reads_one_input(block) else GROUPED_PARALLEL_MIN_WORK
