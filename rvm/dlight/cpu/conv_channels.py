"""The CPU conv rule: NCHW convolutions vectorized over output channels.

Applies to a kernel the window rule would take (one reduction block, its reduction loops
inside its spatial loops, elementwise producers such as the padded input before it and an
elementwise epilogue after it) when the block is a dense convolution with the output
channel ``f`` outside the output's contiguous axis ``x`` (NCHW): a weight parameter
indexed by block axes alone (``W[f, c, ky, kx]``), ``f`` its only spatial axis, every
reduction axis among its indices, and an input read that does not use ``f`` (so not a
grouped or depthwise one, whose input channel follows ``f``) but does use ``x``.
The loops become

    W_global[f // width, c, ky, kx, f % width] = W[f, c, ky, kx]   (at build when constant)
    for n, y                                  (fused; parallel from CONV_PARALLEL_MIN_WORK)
      for f_o, x_o:
        acc[rows, width] = 0                      (vectorized over width, rows unrolled)
        for c, ky, kx:
            for f_i in vectorized(width):
                for x_i in unroll(rows):          acc[x_i, f_i] += in[.., x] * W_global[..]
        e[rows, width] = epilogue(acc)        (vectorized over width: a per-channel epilogue)
        out[n, f, y, x] = e                   (vectorized over x: STORE_LANES)

so one vector load of the packed weight feeds ``rows`` FMAs, each with a broadcast of one
input element: the output width no longer decides the vector length (a 14- or 28-wide map
left the window rule a scalar tail per row), the channel count does. The accumulator is
stored ``[.., x, f]`` (``transform_layout``), so its vector is contiguous. ``width``
is the channel count when it fits one vector register (8 or 3 channels: one masked
tile), else the vector width when it divides it, else the largest divisor between half
a vector and a vector, else the rule does not apply (the window rule takes the kernel);
``rows`` is the largest divisor of the output width up to MAX_ROWS, and the rule does
not apply when that is below MIN_ROWS (and the width) or 1: a prime-wide map (where it
applies, a 32-register target takes up to MAX_WIDE_ROWS columns, or MAX_HALF_ROWS for a
``width`` filling at most half a vector).

An epilogue that reads, besides the conv's result, only buffers its columns do not index
(a bias, a batch norm's scale and shift: ``_channel_epilogue``) runs on the accumulators'
vectors of channels, into a second local tile that the write-back copies out; any other
(a residual, read ``[.., x, f]`` that way would be a gather) is inlined into the
write-back. On the vectors of channels an epilogue costs one operation per column; after
the write-back's transposition it cost one per channel and part-vector of columns (the CNN
at batch 64, one core, alternated in one process: its 1 -> 8 channel conv 0.182 -> 0.153
ms, its 8 -> 16 one 0.339 -> 0.320 ms; the ResNet's at a symbolic batch 8: the 7 x 7 stem
0.436 -> 0.411 ms, a 3 x 3 on 16 x 16 0.104 -> 0.100 ms, the 1 x 1 0.0139 -> 0.0109 ms,
the 16 -> 32 channel 3 x 3 on 8 x 8 0.057 -> 0.058 ms).

The weight is packed by a copy that carries ``LAYOUT_REWRITE``: a bound weight
(``layout_free_buffers``) is packed once, at build, by SplitLayoutRewritePreproc; a
run-time one per call (``F x C x KH x KW`` elements, at most ``1 / (OH x OW)`` of the
convolution's work).
"""
from rvm.dlight.analysis import (
    CONV_PARALLEL_MIN_WORK, SPATIAL, fuse_or_first, loop_kinds, work, write_dtype,
)
from rvm.dlight.cpu.conv import axis_vars, inline_epilogue, one_reduction, schedule_pad
from rvm.dlight.cpu.pack import LAYOUT_REWRITE, param_index
from rvm.dlight.rule import ScheduleRule
from rvm.tir.expr import Var
from rvm.tir.free_vars import used_vars
from rvm.tir.schedule.analysis import const_extent

# Output columns per tile, one vector accumulator each (14: a 14- or 28-wide map in whole
# tiles); a wider tile of two vectors per column measured slower (ResNet 32 -> 32 channels
# on 8 x 8: 38 against 63 GFLOPS, one thread).
MAX_ROWS = 14
# With AVX-512's 32 registers, up to 16 columns (16 accumulators, the weight and the
# broadcast input): a 16- or 32-wide map in one or two tiles of 16 rather than 8 columns,
# which halves the loads of the weight per multiply-add. The ResNet's 3 x 3 16 -> 16 channel
# convs on 16 x 16 maps at batch 8, one core, alternated in one process: 0.107 -> 0.102 ms
# and 0.110 -> 0.106 ms (0.95-0.96x in two runs); its 7 x 7 stem on 32 x 32 unchanged.
MAX_WIDE_ROWS = 16
# Output columns per tile when the channels fill at most half a vector (a 1 -> 8 channel conv
# on AVX-512, whose 32 registers hold 28 half-vector accumulators besides the weight and the
# broadcast input): twice the columns halve the tile's overhead per multiply-add, which with
# one input channel (9 taps per output) is most of its time. The CNN's first conv at batch
# 64 (28 x 28 maps, 8 channels): 0.33 -> 0.28 ms on one core.
MAX_HALF_ROWS = 28
# The write-back runs over the tile's columns (contiguous stores) when they fill vectors of
# STORE_LANES: ResNet 7x7/2 conv at a symbolic batch 8 (32 x 32 maps, 8 columns): 0.90 ->
# 0.64 ms on one core against one store per element ``H x W`` apart (a scatter); its 3 x 3
# convs on 16 x 16 and 8 x 8 maps (8 columns, a residual add in the epilogue): 0.142 ->
# 0.114 ms and 0.125 -> 0.101 ms at batch 8. Otherwise (the CNN's 28 and 14 columns) it
# runs over the columns outside and the channels unrolled inside: gcc then reads the
# accumulators ``[x, f]`` as one interleaved group and transposes it with vector permutes
# (vpermt2ps), where the channel order left one scalar store per element (a scatter). The
# CNN at batch 64, thread CPU time on one core, both orders alternated in one process: its
# 1 -> 8 channel conv on 28 x 28 maps 0.251 -> 0.212 ms, its 8 -> 16 one on 14 x 14 maps
# 0.367 -> 0.354 ms. (The columns' order with the channels in a loop, not unrolled, had
# measured 2.2 against 1.42 ms for the scatter: a strided gather per column.) With 8
# columns this order measured slower on the ResNet's 7 x 7 stem (0.75 against 0.48 ms).
STORE_LANES = 8
# Fewer columns per tile leave the FMAs waiting on each other (a 17-wide map: 1 column).
MIN_ROWS = 4


def channel_width(channels, lanes):
    """The tile's channel count for ``channels`` output channels, or None (module
    docstring)."""
    if channels <= lanes:
        return channels
    if channels % lanes == 0:
        return lanes
    return next((w for w in range(lanes, lanes // 2 - 1, -1) if channels % w == 0), None)


def row_count(columns, max_rows=MAX_ROWS):
    """The tile's output columns: the largest divisor of ``columns`` up to ``max_rows``."""
    return max(r for r in range(1, max_rows + 1) if columns % r == 0)


def max_rows(width, lanes, vector_bytes):
    """The most output columns of a tile of ``width`` channels (module docstring)."""
    if vector_bytes < 64:
        return MAX_ROWS
    return MAX_HALF_ROWS if 2 * width <= lanes else MAX_WIDE_ROWS


def _operands(sch, conv):
    """(index of the weight read, the weight's output-channel axis, the input read's axes)
    of a dense convolution block (module docstring), or None."""
    blk = sch.get(conv)
    out = blk.writes[0].buffer
    spatial = {id(iv.var) for iv in blk.iter_vars if iv.iter_type == SPATIAL}
    reduction = {id(iv.var) for iv in blk.iter_vars if iv.iter_type != SPATIAL}
    weight, others = None, []
    for index, region in enumerate(blk.reads):
        if region.buffer is out:
            continue
        mins = [r.min for r in region.region]
        axes = {id(m) for m in mins if isinstance(m, Var)}
        plain = all(isinstance(m, Var) and id(m) in spatial | reduction for m in mins) \
            and len(axes) == len(mins) and all(getattr(r.extent, "value", None) == 1
                                               for r in region.region)
        if plain and weight is None and param_index(sch, region.buffer) is not None \
                and len(axes & spatial) == 1 and reduction <= axes:
            weight = (index, next(iter(axes & spatial)))
        else:
            others.append({v for r in region.region for v in used_vars(r.min)})
    if weight is None or len(others) != 1 or weight[1] in others[0]:
        return None
    return weight[0], weight[1], others[0]


class ConvChannels(ScheduleRule):
    """Vectorizes NCHW convolutions over output channels (module docstring)."""

    name = "conv"

    def apply(self, sch, info):
        found = one_reduction(sch)
        if found is None:
            return False
        blocks, index = found
        conv = blocks[index]
        kinds = loop_kinds(sch, conv)
        if None in kinds or "R" not in kinds or "S" in kinds[kinds.index("R"):] \
                or "R" in kinds[:kinds.index("R")]:
            return False
        loops = sch.get_loops(conv)
        spatial, reduction = loops[:kinds.index("R")], loops[kinds.index("R"):]
        operands = _operands(sch, conv)
        if operands is None or len(spatial) < 2:
            return False
        w_index, f_axis, input_axes = operands
        f_loops = [loop for loop in spatial if axis_vars(sch, conv, loop) == {f_axis}]
        x = spatial[-1]
        if len(f_loops) != 1 or f_loops[0] is x or not axis_vars(sch, conv, x) & input_axes:
            return False
        f = f_loops[0]
        channels, columns = const_extent(sch.get(f)), const_extent(sch.get(x))
        lanes = info.lanes(write_dtype(sch, conv))
        width = None if channels is None or columns is None else channel_width(channels, lanes)
        rows = None if width is None else row_count(columns)
        if rows is None or rows < min(MIN_ROWS, columns) or rows < 2:
            return False  # a prime-wide map: the window rule's masked vector of columns
        rows = row_count(columns, max_rows(width, lanes, info.vector_bytes))
        if not inline_epilogue(sch, blocks, index):
            return False
        for pad in blocks[:index]:
            schedule_pad(sch, pad, info)
        _pack_weight(sch, conv, w_index, f_axis, width)
        return _schedule(sch, conv, spatial, reduction, f, x, width, rows, info)


def _pack_weight(sch, conv, w_index, f_axis, width):
    """Copies the weight into ``[f // width, .., f % width]`` (its other axes in order)
    before the convolution; the copy carries LAYOUT_REWRITE."""
    region = sch.get(conv).reads[w_index].region
    f_dim = [id(r.min) for r in region].index(f_axis)
    copy = sch.cache_read(conv, w_index, "global")

    def panels(*idx):
        rest = [v for k, v in enumerate(idx) if k != f_dim]
        return (idx[f_dim] // width, *rest, idx[f_dim] % width)

    sch.transform_layout(copy, ("write", 0), panels)
    loops = sch.get_loops(copy)
    f_o, f_i = sch.split(loops[f_dim], [None, width])
    rest = [loop for k, loop in enumerate(loops) if k != f_dim]
    sch.reorder(f_o, *rest, f_i)
    sch.annotate(copy, LAYOUT_REWRITE, 1)
    return copy


def _channel_epilogue(sch, block, producer):
    """True when ``block``, the one consumer of what ``producer`` writes (the conv's result),
    reads that result at its own output's indices and every other buffer at indices its
    columns do not feed: a bias, a batch norm's scale and shift, not a residual (whose
    read in the accumulators' ``[.., x, f]`` order would be a gather)."""
    blk = sch.get(block)
    made = sch.get(producer).writes[0].buffer
    written = [id(r.min) for r in blk.writes[0].region]
    x_axis = id(blk.iter_vars[-1].var)
    if not written or written[-1] != x_axis:
        return False
    for region in blk.reads:
        mins = [r.min for r in region.region]
        if region.buffer is made:
            if [id(m) for m in mins] != written:
                return False
        elif any(x_axis in used_vars(m) for m in mins):
            return False
    return True


def _epilogue_on_accumulators(sch, copy, epilogue, layout, loop):
    """Computes ``epilogue`` under ``loop`` on the accumulators (the write-back ``copy`` of
    the conv's result inlined into it), into a local tile laid out by ``layout`` and
    vectorized over the channels; returns the copy of that tile to the output."""
    sch.compute_inline(copy)
    back = sch.cache_write(epilogue, 0, "local")
    sch.transform_layout(epilogue, ("write", 0), layout)
    sch.reverse_compute_at(epilogue, loop)
    sch.reverse_compute_at(back, loop)
    e_f, e_x = sch.get_loops(epilogue)[-2:]
    sch.reorder(e_x, e_f)
    sch.vectorize(e_f)
    sch.unroll(e_x)
    return back


def _schedule(sch, conv, spatial, reduction, f, x, width, rows, info):
    total = work(sch, spatial + reduction)
    f_o, f_i = sch.split(f, [None, width])
    x_o, x_i = sch.split(x, [None, rows])
    # Rows of the output (n, y) outside the channel panels: the fused parallel loop is then
    # of two loops (a third one's index, a floormod of the fused one, kept gcc from
    # vectorizing the tile inside OpenMP's outlined function).
    rows_of_output = [loop for loop in spatial if loop is not f and loop is not x]
    outer = [*rows_of_output, f_o, x_o]
    sch.reorder(*outer, *reduction, f_i, x_i)
    acc = sch.cache_write(conv, 0, "local")
    f_dim = [id(r.min) for r in sch.get(conv).writes[0].region].index(
        next(iter(axis_vars(sch, conv, f_i))))

    def channels_last(*idx):
        return (*[v for k, v in enumerate(idx) if k != f_dim], idx[f_dim])

    sch.transform_layout(conv, ("write", 0), channels_last)
    consumers = sch.get_consumers(acc)
    if len(consumers) == 1 and _channel_epilogue(sch, consumers[0], acc):
        acc = _epilogue_on_accumulators(sch, acc, consumers[0], channels_last, outer[-1])
    else:
        for consumer in consumers:
            sch.reverse_compute_inline(consumer)
        sch.reverse_compute_at(acc, outer[-1])
    init = sch.decompose_reduction(conv, reduction[0])
    init_f, init_x = sch.get_loops(init)[-2:]
    sch.reorder(init_x, init_f)
    sch.vectorize(init_f)
    # Unrolled, the zeroing is a vector store per column that gcc keeps in registers;
    # as a loop, gcc made it a call to memset per tile (the CNN's 1 -> 8 channel conv at
    # batch 64: 0.215 -> 0.192 ms on one core, alternated in one process).
    sch.unroll(init_x)
    sch.vectorize(f_i)
    if rows > 1:
        sch.unroll(x_i)
    back_f, back_x = sch.get_loops(acc)[-2:]
    if rows % STORE_LANES:
        sch.reorder(back_x, back_f)
        sch.vectorize(back_x)
        sch.unroll(back_f)
    else:
        sch.vectorize(back_x)
    outer_loop = fuse_or_first(sch, rows_of_output)
    if outer_loop is not None and info.cores > 1 and total >= CONV_PARALLEL_MIN_WORK:
        sch.parallel(outer_loop)
    return True
