"""The CPU matmul rule: register tiles of vector accumulators for NN and NT matmuls.

Applies to a kernel whose top-level blocks are one reduction block with its
single reduction loop innermost (``C[b.., i, j] += A[b.., i, k] * B[b.., k, j]``:
matmul, batch_matmul, dense after its constant weight was transposed at
build time) and optionally one elementwise epilogue (bias, activation:
what FuseOps put after it), the last axis and the reduction constant. With a
read contiguous along the output's last axis (``B[k, j]``, NN) the loops become

    B_global[.., j // width, k, j % width] = B[.., k, j]   (when packed, see below)
    for b.., j_o, i_o  (fused; parallel above MATMUL_PARALLEL_MIN_WORK)
        acc[rows, width] = 0                      (vectorized over width)
        for k:
            for j_i in vectorized(width):
                for i_i in unroll(rows):          acc += A[i, k] * B[k, j]
        C[..] = epilogue(acc)                     (vectorized over width)

Column panels run outside row tiles, so a panel of B stays in cache while
every row tile reads it, and inside k the vector loop holds the unrolled rows,
so one load of B feeds ``rows`` FMAs with broadcasts of A. ``width`` is the
whole last axis when it fits ``MAX_VECTORS`` vector registers (the 10-wide
output layer is one masked tile), else one of 1..MAX_VECTORS registers that
divides it, else MAX_VECTORS registers with a predicated last tile; ``rows``
one of ``ROW_TILES`` dividing the row count, the pair chosen by ``tile_shape``
with at most ``MAX_ACCUMULATORS`` accumulators, so the tile stays in registers.

A row count known only at run time (a model's batch) gets the same tile: ``prepare``
partitions the row loop into ``n // rows`` full tiles and the remaining rows
(``Schedule.partition_rows``), the full tiles scheduled as above without a predicate, the
remainder one row at a time, each with an accumulator of its tile's fixed extent; under
batch loops of any extent (attention's batch and heads, BERT's batch of sequences), per
batch, the batches and column panels fused into the parallel loop above the work threshold
(a batch of one still takes every core). A symbolic reduction (attention's P.V, over the
sequence) takes the NN tile as it is: the k loop runs outside the tile.
Deciding on threads, a symbolic row count stands for SYMBOLIC_EXTENT rows per symbol
in it: rows ``b * l`` (a batch and a sequence flattened) as many as the loops ``b, l``.

B is packed into panels of ``width`` columns (``pack.py``) when it is a
parameter of two panels or more and either a constant at every call
(``layout_free_buffers``: ``SplitLayoutRewritePreproc`` then packs it once, at
build) or read by ``PACK_MIN_ROWS`` rows or more (the copy then costs little
next to the matmul): each k then reads ``width`` contiguous elements instead
of a row N elements away, which for N a power of two also maps every row to
the same few cache sets.

With every read contiguous along the reduction (``B[j, k]``, NT: dense and
linear weights, attention scores) and at least two rows, the reduction is
split by the vector width and ``rfactor``ed: a tile of up to 4 x 4 vector
accumulators of partial sums per lane runs over the outer reduction loop, and
each output is summed across lanes once, with the epilogue, at write-back.

Other kernels (an NT matmul of one row or of a symbolic row count whose weight is not
a constant, one whose reduction no vector divides or is symbolic, symbolic columns)
are left to the generic rule. Columns fewer than one vector with a constant weight are
padded to a whole vector first (``Schedule.pad_columns``).
"""
from rvm.dlight.analysis import (
    MATMUL_PARALLEL_MIN_WORK, SYMBOLIC_EXTENT, extent_of, fuse_or_first, inline_producers,
    parallel_outer, reduction_then_epilogue, top_blocks, work, write_dtype,
)
from rvm.dlight.cpu.pack import LAYOUT_REWRITE, is_layout_free, pack_panels, param_index
from rvm.dlight.rule import ScheduleRule
from rvm.tir.free_vars import used_vars
from rvm.tir.schedule.analysis import const_extent, is_reduction_block
from rvm.tir.schedule.error import ScheduleError
from rvm.tir.schedule.primitive.partition_rows import TAIL, partition_func

MAX_VECTORS = 4
# Marks the copy of a padded matmul's real columns (``_pad``): the rule moves it under
# the register tile instead of inlining it.
PAD_COPY = "dlight.pad_copy"
ROW_TILES = (8, 6, 4, 3, 2, 1)
MAX_ACCUMULATORS = 24  # of AVX-512's 32 vector registers; the rest hold B and A
# Rows of A at or above which a B that is not a constant is packed inside the kernel: the
# copy (K x N elements) then costs at most a few percent of the matmul.
PACK_MIN_ROWS = 64
# The NT register tile: rows of A x rows of B, one vector accumulator (lanes of k) each.
NT_ROWS, NT_COLS = (4, 3, 2), (4, 3, 2)


def _reads_along(block, axis_var):
    """True when some read's last index uses ``axis_var`` alone (the contiguous operand)."""
    for region in block.reads:
        if region.region and set(used_vars(region.region[-1].min)) == {id(axis_var)}:
            return True
    return False


def _widths(cols_extent, lanes):
    """The tile widths allowed for ``cols_extent`` columns (see the module docstring)."""
    if cols_extent <= MAX_VECTORS * lanes:
        return [cols_extent]
    widths = [n * lanes for n in range(MAX_VECTORS, 0, -1) if cols_extent % (n * lanes) == 0]
    return widths or [MAX_VECTORS * lanes]  # a predicated last tile


def tile_shape(rows_extent, cols_extent, lanes):
    """(rows, width) of the register tile; ``rows_extent`` None: a symbolic row count,
    which full tiles and a remainder cover (any rows).

    Of the tiles whose rows divide the row count and whose width ``_widths`` allows, with at
    most MAX_ACCUMULATORS vector accumulators, the one with the most accumulators plus half
    a point per row (each row reuses the tile's loads of B: 6 x 4 registers before 8 x 2,
    8 x 2 before 4 x 4, measured 89 against 75 GFLOPS on one core at 512^3)."""
    best = None
    for width in _widths(cols_extent, lanes):
        vectors = -(-width // lanes)
        for rows in ROW_TILES:
            if rows_extent is not None and rows_extent % rows:
                continue
            if rows * vectors > MAX_ACCUMULATORS:
                continue
            score = rows * vectors + rows / 2
            if best is None or score > best[0]:
                best = (score, rows, width)
    return best[1], best[2]


def _axis_of(sch, block, loop):
    """The block axis the loop binds, alone, or None."""
    blk = sch.get(block)
    realize = sch.get_sref(block).realize
    var = sch.get(loop).loop_var
    axis = [iv.var for iv, v in zip(blk.iter_vars, realize.iter_values)
            if id(var) in used_vars(v)]
    return axis[0] if len(axis) == 1 else None


def _packable_read(sch, block, axes, width, cols, rows_total, transposed=False):
    """The index of the read ``B[.., k, j]`` (``transposed``: ``B[.., j, k]``) worth packing
    into panels of ``width`` columns, or None. B must be a parameter read at exactly those
    axes (``axes`` = (k, j)) whose column count ``width`` divides. A constant at every call
    (``layout_free_buffers``: packed once at build) is packed when that makes two panels or
    more, or transposes it; a run-time B only untransposed and when PACK_MIN_ROWS rows or
    more read it (the copy then costs little next to the matmul)."""
    if cols % width or (cols == width and not transposed):
        return None  # no whole panels, or one panel: the layout B already has
    k_axis, j_axis = axes
    want = (j_axis, k_axis) if transposed else (k_axis, j_axis)
    for index, region in enumerate(sch.get(block).reads):
        ranges = region.region
        if len(ranges) < 2 or param_index(sch, region.buffer) is None:
            continue
        if not all(r.min is axis for r, axis in zip(ranges[-2:], want)):
            continue
        if any(getattr(r.extent, "value", None) != 1 for r in ranges):
            continue
        if is_layout_free(sch, region.buffer) or (not transposed
                                                   and rows_total >= PACK_MIN_ROWS):
            return index
    return None


class Matmul(ScheduleRule):
    """Register-tiles NN matmuls with a fused epilogue (module docstring)."""

    name = "matmul"

    def prepare(self, sch, info):
        """A matmul narrower than one vector gets its columns padded to a whole vector
        (``sch.pad_columns``), and one whose row count is symbolic full row tiles and a
        remainder (``sch.partition_rows``), both traced primitives; other kernels stay as
        they are."""
        blocks = inline_producers(sch)
        found = _find_matmul(sch, blocks)
        if found is None:
            return True
        mm, loops, _ = found
        *batch, i, j, _ = loops
        lanes = info.lanes(write_dtype(sch, mm))
        keep = 0
        if extent_of(sch, j) < lanes and _pad(sch, mm, len(blocks) == 1, lanes):
            keep = 1
            blocks = top_blocks(sch)[1:]
            mm = blocks[0]
            *batch, i, j, _ = sch.get_loops(mm)
        if const_extent(sch.get(i)) is not None:
            return True
        rows, _ = tile_shape(None, extent_of(sch, j), lanes)
        probe = sch.copy()
        if len(blocks) == 1:
            probe.cache_write(mm, 0, "global")
        if partition_func(probe.mod["main"], len(batch), rows, keep) is None:
            return True  # the nests do not share the row loop: scheduled as they are
        if len(blocks) == 1:
            sch.cache_write(mm, 0, "global")  # an epilogue (a copy), partitioned with it
        sch.partition_rows(len(batch), rows, keep)
        return True

    def apply(self, sch, info):
        blocks = inline_producers(sch, keep=_is_packing)
        pads = [b for b in blocks if sch.get(b).annotations.get(LAYOUT_REWRITE)]
        # the copies of a padded tile's real columns stay (_register_tile moves them)
        blocks = [b for b in blocks if not _is_packing(sch.get(b))]
        for pad in pads:  # the padded copy of a constant weight (_pad), folded at build
            sch.vectorize(sch.get_loops(pad)[-1])
        if len(blocks) == 4 and [sch.get(b).name_hint for b in blocks[2:]] == \
                [sch.get(b).name_hint + TAIL for b in blocks[:2]]:
            return _schedule_row_tiles(sch, blocks, info)
        found = _find_matmul(sch, blocks)
        if found is None:
            return False
        mm, loops, j_axis = found
        lanes = info.lanes(write_dtype(sch, mm))
        if not _reads_along(sch.get(mm), j_axis):
            # NT: a constant B becomes NN panels at build; otherwise partial sums per lane
            return _schedule_nn(sch, mm, loops, j_axis, lanes, info, transposed=True) \
                or _schedule_nt(sch, mm, loops, lanes, info)
        return _schedule_nn(sch, mm, loops, j_axis, lanes, info)


def _pad(sch, mm, alone, lanes):
    """Pads matmul ``mm``'s columns to ``lanes`` through a copy of its constant weight
    (``sch.pad_columns``), marks that copy LAYOUT_REWRITE (folded at build) and the copy of
    the real columns PAD_COPY; ``alone``: no epilogue, the matmul's result written back
    through a cache_write first (the copy of the real columns writes the intermediate).
    False, ``sch`` untouched, when no weight is a constant the primitive can pad."""
    weights = [k for k, r in enumerate(sch.get(mm).reads)
               if param_index(sch, r.buffer) is not None and is_layout_free(sch, r.buffer)]
    for index in weights:
        probe = sch.copy()
        try:
            if alone:
                probe.cache_write(mm, 0, "global")
            probe.pad_columns(mm, index, lanes)
        except ScheduleError:
            continue
        name = sch.get(mm).name_hint
        if alone:
            sch.cache_write(mm, 0, "global")
        sch.pad_columns(mm, index, lanes)
        blocks = top_blocks(sch)
        sch.annotate(blocks[0], LAYOUT_REWRITE, 1)
        names = [sch.get(b).name_hint for b in blocks]
        sch.annotate(blocks[names.index(name) + 1], PAD_COPY, 1)
        return True
    return False


def _is_packing(block):
    """True for a block copying a constant into a packed layout (``pack.py``) or the real
    columns out of a padded tile (``_pad``): blocks ``inline_producers`` keeps."""
    return bool(block.annotations.get(LAYOUT_REWRITE) or block.annotations.get(PAD_COPY))


def _find_matmul(sch, blocks):
    """(block, loops, the block axis of the column loop) when ``blocks`` are a matmul
    (one reduction block, its reduction loop innermost, constant columns and reduction)
    and at most one epilogue; else None."""
    mm = reduction_then_epilogue(sch, blocks)
    if mm is None:
        return None
    blk = sch.get(mm)
    loops = sch.get_loops(mm)
    *batch, i, j, k = loops
    if const_extent(sch.get(j)) is None:
        return None
    j_axis = _axis_of(sch, mm, j)
    if j_axis is None:
        return None
    if const_extent(sch.get(k)) is None and not _reads_along(blk, j_axis):
        return None  # a symbolic reduction: the NN tile only (attention's P.V over the sequence)
    return mm, loops, j_axis


def _schedule_nn(sch, mm, loops, j_axis, lanes, info, transposed=False):
    """The NN form: B packed into panels when it pays (``pack.py``), the register tile
    ``tile_shape`` over (rows, width) with the k loop outside it. ``transposed`` (an NT
    matmul): only when B is a constant packed into panels, else False."""
    *batch, i, j, k = loops
    cols = extent_of(sch, j)
    rows_extent = const_extent(sch.get(i))
    # a symbolic row count that prepare did not partition (a symbolic batch): one row
    rows, width = tile_shape(1 if rows_extent is None else rows_extent, cols, lanes)
    total = work(sch, loops)
    extents = [const_extent(sch.get(loop)) for loop in (*batch, i)]
    rows_total = 0 if None in extents else work(sch, [*batch, i])  # symbolic: maybe one row
    if not _pack(sch, mm, j_axis, k, width, cols, rows_total, info, transposed):
        return False
    i_o, i_i = sch.split(i, [None, rows])
    j_o = _register_tile(sch, mm, batch, i_o, i_i, j, k, width)
    parallel_outer(sch, [*batch, j_o, i_o], total, info, MATMUL_PARALLEL_MIN_WORK)
    return True


def _pack(sch, mm, j_axis, k, width, cols, rows_total, info, transposed):
    """Packs B into panels when ``_packable_read`` says it pays; False when ``transposed``
    and it does not (the NN form then does not apply)."""
    k_axis = _axis_of(sch, mm, k)
    packed = None if k_axis is None else _packable_read(sch, mm, (k_axis, j_axis), width,
                                                        cols, rows_total, transposed)
    if packed is not None:
        pack_panels(sch, mm, packed, width, info, transposed)
    return packed is not None or not transposed


def _register_tile(sch, mm, batch, i_o, i_i, j, k, width, rows_outer=False):
    """The register tile of rows ``i_i`` (unrolled; None: one row, ``i_o``) by ``width``
    columns under the k loop, its accumulator written back (through the epilogue) per
    tile; returns the column panel loop. ``rows_outer``: row tiles outside column panels
    (the loop threads split, see _schedule_row_tiles)."""
    j_o, j_i = sch.split(j, [None, width])
    # Column panels outside row tiles (a panel of B stays in cache while every row tile
    # reads it); inside k the vector loop holds the unrolled rows, so each vector of B is
    # loaded once and feeds ``rows`` FMAs with broadcasts of A.
    tile = (i_o, j_o) if rows_outer else (j_o, i_o)
    sch.reorder(*batch, *tile, k, j_i, *([] if i_i is None else [i_i]))
    if sch.get(mm).writes[0].buffer.scope == "local":
        acc, = sch.get_consumers(mm)  # padded columns: the copy of the real ones (pad_columns)
    else:
        acc = sch.cache_write(mm, 0, "local")
    # placed before the epilogue is inlined into it: the epilogue may share its output
    # with a remainder's (partition_rows), and only a buffer's one writer moves
    sch.reverse_compute_at(acc, tile[1])
    for consumer in sch.get_consumers(acc):
        sch.reverse_compute_inline(consumer)
    init = sch.decompose_reduction(mm, k)
    if i_i is not None:
        j_init, i_init = sch.get_loops(init)[-2:]
        sch.reorder(i_init, j_init)
        sch.unroll(i_i)
    sch.vectorize(j_i)
    sch.vectorize(sch.get_loops(init)[-1])
    sch.vectorize(sch.get_loops(acc)[-1])
    return j_o


def _schedule_row_tiles(sch, blocks, info):
    """A matmul ``prepare`` partitioned (``sch.partition_rows``): the register tile on its full
    row tiles (rows unrolled, parallel over tiles, or over batches and column panels, above
    the work threshold), one row at a time on the remainder, both reading the same packed
    panels of B."""
    mm, _, tail, _ = blocks
    found = _find_matmul(sch, blocks[:2])
    if found is None or not is_reduction_block(sch.get(tail)):
        return False
    _, loops, j_axis = found
    *batch, i_o, i_i, j, k = loops
    lanes = info.lanes(write_dtype(sch, mm))
    cols = extent_of(sch, j)
    rows, width = tile_shape(None, cols, lanes)
    if const_extent(sch.get(i_i)) != rows:
        return False
    transposed = not _reads_along(sch.get(mm), j_axis)
    if not _pack(sch, mm, j_axis, k, width, cols, 0, info, transposed):
        return False
    parallel = info.cores > 1 and \
        _symbolic_rows(sch, i_o) * work(sch, [*batch, j, k]) >= MATMUL_PARALLEL_MIN_WORK
    # parallel: threads over row tiles, each running every column panel, or under batch
    # loops over the batches and column panels fused (a batch of one still takes every
    # core); a loop fused with the symbolic tile count would index through a division by it
    j_o = _register_tile(sch, mm, batch, i_o, i_i, j, k, width,
                         rows_outer=parallel and not batch)
    if parallel:
        panels = [j_o] if extent_of(sch, j_o) > 1 else []
        sch.parallel(fuse_or_first(sch, [*batch, *panels]) if batch else i_o)
    *t_batch, t_i, t_j, t_k = sch.get_loops(tail)
    _register_tile(sch, tail, t_batch, t_i, None, t_j, t_k, width)
    return True


def _symbolic_rows(sch, tiles):
    """The rows a symbolic tile loop stands for when estimating work: SYMBOLIC_EXTENT per
    variable of its extent, so rows ``b * L`` (a model's batch times its sequence, flattened
    by a reshape) count as the two loops ``b, L`` of the same rows unflattened do, not as
    one symbolic loop."""
    return SYMBOLIC_EXTENT ** max(1, len(used_vars(sch.get(tiles).extent)))


def _schedule_nt(sch, mm, loops, lanes, info):
    """The NT form (every read contiguous along the reduction): partial sums per vector lane
    (``rfactor``) in a register tile of NT_ROWS x NT_COLS vector accumulators, summed across
    lanes once per output when the tile is written back."""
    *batch, i, j, k = loops
    k_extent = const_extent(sch.get(k))
    blk = sch.get(mm)
    k_var = sch.get(k).loop_var
    realize = sch.get_sref(mm).realize
    k_axis = [iv.var for iv, v in zip(blk.iter_vars, realize.iter_values)
              if id(k_var) in used_vars(v)]
    if len(k_axis) != 1 or any(set(used_vars(r.region[-1].min)) != {id(k_axis[0])}
                               for r in blk.reads if r.region):
        return False
    if k_extent is None or k_extent % lanes or k_extent <= lanes:
        return False
    if (const_extent(sch.get(i)) or 1) == 1:
        # One row (batch 1) or a symbolic count: the generic rule's one SIMD dot product per
        # output reads each weight once too, without the lanes' partial sums (measured 20-30%
        # faster at 1x128x784 and 1x512x784).
        return False
    total = work(sch, loops)
    rows = _divisor(const_extent(sch.get(i)), NT_ROWS)
    cols = _divisor(const_extent(sch.get(j)), NT_COLS)
    _, lane = sch.split(k, [None, lanes])
    rf = sch.rfactor(lane, factor_axis=len(batch) + 2)
    *r_batch, r_i, r_j, r_k, r_lane = sch.get_loops(rf)
    i_o, i_i = sch.split(r_i, [None, rows])
    j_o, j_i = sch.split(r_j, [None, cols])
    sch.reorder(*r_batch, i_o, j_o, r_k, i_i, j_i, r_lane)
    sch.unroll(i_i)
    sch.unroll(j_i)
    sch.vectorize(r_lane)
    sch.compute_inline(sch.cache_write(rf, 0, "local"))
    sch.reverse_compute_at(mm, j_o)
    for consumer in sch.get_consumers(mm):
        sch.reverse_compute_at(consumer, j_o)
    init = sch.decompose_reduction(rf, r_k)
    sch.vectorize(sch.get_loops(init)[-1])
    parallel_outer(sch, [*r_batch, i_o, j_o], total, info, MATMUL_PARALLEL_MIN_WORK)
    return True


def _divisor(extent, choices):
    """The largest of ``choices`` dividing ``extent`` (1 when symbolic or none does)."""
    if extent is None:
        return 1
    return next((c for c in choices if extent % c == 0), 1)
