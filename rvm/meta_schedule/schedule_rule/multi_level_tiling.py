"""MultiLevelTiling: register and cache tiling of reduction blocks (matmul, dense, conv).

Each spatial loop is split into four levels and each reduction loop into two
(sampled perfect tilings), and the pieces are ordered by ``structure``
"SSRSRS": outer spatial tiles (later fused and run in parallel), middle
spatial tiles, outer reduction, inner spatial, inner reduction, innermost
spatial (later vectorized and unrolled). The block then accumulates into a
"local" buffer (``cache_write``) whose write-back is computed at the middle
spatial tile, so the accumulators of one tile stay in registers for the
whole reduction; elementwise consumers of the result (bias add, relu) are
folded into that write-back (``reverse_compute_inline``).

A buffer read along the vector axis and the reduction only (``B[k, j]`` of
``C[i, j] += A[i, k] * B[k, j]``) strides through memory by a whole row per
step of the reduction; with power-of-two row lengths those rows fall into a few
cache sets and evict each other. A second design space therefore packs it:
under the outer spatial tile (the loop that runs in parallel) the tile's part
of the buffer is copied (``cache_read``, ``compute_at``) into panels as wide as
the vector tile (``transform_layout`` to ``[j // lanes, k, j % lanes]``), so the
register tile streams one contiguous panel through a long inner reduction loop.
The layout is fixed when the space is made, so each panel width (32 or 64
lanes) is a space of its own with that vector length. The copy costs a pass over the
tile's part of the buffer per outer tile, so it pays off for larger row
counts; the search measures both spaces.

When every buffer the block reads is contiguous along a reduction axis
(``Y[i, j] += X[i, k] * W[j, k]``) the innermost spatial axis strides
through memory, so the design space is instead one that splits the innermost
reduction loop by a vector length and ``rfactor``s it: partial sums are kept
per lane in a register tile of at most 8 x 4 vector accumulators, which the
outer reduction loop runs over (structure "SSRS"; the register tile's loops are
unrolled, so the accumulators are registers, not memory), and are summed once
per output at the end.
"""
from rvm.meta_schedule.loop_analysis import (
    REDUCTION, SPATIAL, contiguous_axis_types, is_reduction_block,
)
from rvm.meta_schedule.schedule_rule.schedule_rule import ScheduleRule, schedule_errors
from rvm.tir.free_vars import used_vars
from rvm.tir.schedule.analysis import const_extent, loop_bound_iter_types

TILED = "meta_schedule.tiled"  # block annotation: tiled by a rule already
# Lengths of the innermost (vector) tile: multiples of a 512-bit register of float32.
VECTOR_LENS = (16, 32, 64)
# The largest innermost tile of the other spatial loops: rows of the register tile.
ROW_TILE = 8
# The rfactor space: outer and middle spatial tiles, the reduction loop, then the register
# tile (at most RF_ROWS x RF_COLS vector accumulators, so they stay in registers) and the
# vector lanes innermost.
RF_STRUCTURE = "SSRS"
RF_ROWS, RF_COLS = 8, 4
# The register tile's rows and columns are drawn from these (when they divide the loop):
# at least 4 and at most 24 vector accumulators, with the row and column operands
# within AVX-512's 32 registers.
RF_ROW_LENS, RF_COL_LENS = (2, 3, 4, 5, 6), (2, 3, 4)


# The panel widths of the packed spaces (one space each): 2 or 4 vector registers.
PACK_LANES = (32, 64)
# The largest inner reduction tile over a packed panel (a whole K of 784 or 1024 fits).
PACKED_REDUCTION = 1024


class ReuseType:
    """How a tile reuses data: ``req`` "no", "may" (with and without) or "must";
    ``levels``: the spatial tile levels (1-based) where the cache is computed;
    ``scope``: the cache's storage scope."""

    def __init__(self, req="must", levels=(2,), scope="local"):
        if req not in ("no", "may", "must"):
            raise ValueError(f"ReuseType req must be 'no', 'may' or 'must', got {req!r}")
        self.req = req
        self.levels = list(levels)
        self.scope = scope


def tile_loops(sch, s_loops, r_loops, structure, max_innermost_factor, inner=(),
               vector_lens=VECTOR_LENS, row_tile=ROW_TILE, row_lens=(), col_lens=(),
               max_innermost_reduction=None):
    """Splits ``s_loops``/``r_loops`` into the levels of ``structure`` (sampled tilings) and
    orders the pieces by it, ``inner`` loops last; returns the spatial levels' loop lists.

    The last spatial loop's innermost tile becomes the vector lanes: its length is drawn
    from ``vector_lens`` (those dividing the extent), and the rest of the loop is tiled;
    without such a length it is a sampled tiling up to ``max_innermost_factor``. The
    other spatial loops' innermost tiles (unrolled rows of the register tile) are at most
    ``row_tile``. ``row_lens`` and ``col_lens``, when given, are the lengths the innermost
    tiles of the other loops and of the last loop are drawn from (those dividing the
    extent; a sampled tiling when none does), so that a register tile is never a single
    accumulator when the loops allow more. ``max_innermost_reduction`` bounds the inner
    reduction tile (default: ``max_innermost_factor``)."""
    n_s, n_r = structure.count("S"), structure.count("R")
    s_tiles = [[] for _ in range(n_s)]
    r_tiles = [[] for _ in range(n_r)]
    for k, loop in enumerate(s_loops):
        last = k == len(s_loops) - 1
        extent = const_extent(sch.get(loop))
        choices = (vector_lens or col_lens) if last else row_lens
        lens = [v for v in choices if extent % v == 0]
        if lens and n_s > 1:
            lanes = sch.sample_categorical(lens, [1.0 / len(lens)] * len(lens))
            rest, vector = sch.split(loop, [None, lanes])
            factors = sch.sample_perfect_tile(rest, n=n_s - 1,
                                              max_innermost_factor=max_innermost_factor)
            parts = list(sch.split(rest, factors)) + [vector]
        else:
            limit = max_innermost_factor if last else min(row_tile, max_innermost_factor)
            factors = sch.sample_perfect_tile(loop, n=n_s, max_innermost_factor=limit)
            parts = sch.split(loop, factors)
        for level, part in enumerate(parts):
            s_tiles[level].append(part)
    r_limit = max_innermost_reduction or max_innermost_factor
    for loop in r_loops:
        factors = sch.sample_perfect_tile(loop, n=n_r, max_innermost_factor=r_limit)
        for level, part in enumerate(sch.split(loop, factors)):
            r_tiles[level].append(part)
    order, s_level, r_level = [], 0, 0
    for ch in structure:
        if ch == "S":
            order.extend(s_tiles[s_level])
            s_level += 1
        else:
            order.extend(r_tiles[r_level])
            r_level += 1
    sch.reorder(*order, *inner)
    return s_tiles


def classify_loops(sch, block):
    """(spatial loops, reduction loops) of ``block``, or None when a loop is symbolic or
    feeds both kinds of axes. Loops feeding no axis (unit loops) are left out."""
    realize = sch.get_sref(block).realize
    s_loops, r_loops = [], []
    for loop_rv in sch.get_loops(block):
        loop = sch.get(loop_rv)
        if const_extent(loop) is None:
            return None
        types = loop_bound_iter_types(realize, loop.loop_var)
        if types == {SPATIAL}:
            s_loops.append(loop_rv)
        elif types == {REDUCTION}:
            r_loops.append(loop_rv)
        elif types:
            return None
    return s_loops, r_loops


def fold_epilogue(sch, producer):
    """Folds the chain of single elementwise consumers of ``producer`` into it."""
    while True:
        consumers = sch.get_consumers(producer)
        if len(consumers) != 1:
            return
        try:
            sch.reverse_compute_inline(consumers[0])
        except schedule_errors():
            return


def packable_read(sch, block):
    """The index of the read buffer of ``block`` indexed by the reduction axes and, in its
    last dimension, by the last spatial axis alone (``B[k, j]``), or None."""
    realize = sch.get_sref(block).realize
    blk = realize.block
    spatial = [iv for iv in blk.iter_vars if iv.iter_type == SPATIAL]
    if len(spatial) < 2:
        return None
    kinds = {id(iv.var): iv.iter_type for iv in blk.iter_vars}
    last = id(spatial[-1].var)
    found = None
    for index, region in enumerate(blk.reads):
        if len(region.region) < 2 or any(r.buffer is region.buffer for r in blk.writes):
            continue
        used = [used_vars(r.min).keys() & kinds.keys() for r in region.region]
        if used[-1] != {last} or any(last in u for u in used[:-1]):
            continue
        others = set().union(*used[:-1])
        if not others or any(kinds[v] != REDUCTION for v in others):
            continue
        if found is not None:
            return None
        found = index
    return found


def pack_read(sch, block, s_tiles, lanes):
    """Packs the packable read of ``block`` into panels ``lanes`` wide under the outer
    spatial tile (see the module docstring); False when a primitive refuses."""
    index = packable_read(sch, block)
    if index is None:
        return False
    try:
        at = sch.get(s_tiles[0][-1])
        depth = [sch.get(loop) for loop in sch.get_loops(block)].index(at) + 1
        copy = sch.cache_read(block, index, "global")
        sch.compute_at(copy, s_tiles[0][-1])
        # A bijection by construction (lanes divides the last extent): the element-wise
        # check would cost seconds per replay of a 512x512 buffer.
        sch.transform_layout(block, ("read", index),
                             lambda *idx: (idx[-1] // lanes, *idx[:-1], idx[-1] % lanes),
                             assume_injective_transform=True)
        # The copy walks panel by panel: lanes-wide contiguous stores.
        own = sch.get_loops(copy)[depth:]
        if len(own) > 1 and (const_extent(sch.get(own[-1])) or 0) % lanes == 0:
            outer, _ = sch.split(own[-1], [None, lanes])
            sch.reorder(outer, *own[:-1])
        return True
    except schedule_errors():
        return False


class MultiLevelTiling(ScheduleRule):
    """Tiles reduction blocks (see the module docstring).

    ``reduction_vector_lens``: the vector lengths of the rfactor design space
    (empty: never); ``reuse_write``: the accumulator cache (a ReuseType);
    ``pack_reads``: whether to add the space with a packed read buffer.
    """

    def __init__(self, structure="SSRSRS", tile_binds=None, max_innermost_factor=64,
                 vector_load_lens=None, reuse_read=None, reuse_write=None,
                 reduction_vector_lens=(16,), filter_fn=None, pack_reads=True):
        if set(structure) - {"S", "R"} or "S" not in structure:
            raise ValueError(f"structure must be made of 'S' and 'R', got {structure!r}")
        self.structure = structure
        self.max_innermost_factor = int(max_innermost_factor)
        self.reuse_write = reuse_write if reuse_write is not None else ReuseType()
        self.reduction_vector_lens = tuple(reduction_vector_lens)
        self.filter_fn = filter_fn
        self.pack_reads = bool(pack_reads)

    def apply(self, sch, block):
        blk = sch.get(block)
        if not is_reduction_block(blk) or TILED in blk.annotations:
            return [sch]
        if self.filter_fn is not None and not self.filter_fn(blk):
            return [sch]
        loops = classify_loops(sch, block)
        if loops is None or not loops[0] or not loops[1]:
            return [sch]
        out = []
        for n in self._vector_lens(sch, block, loops[1]):
            rf = self._apply_rfactor(sch.copy(), block, n)
            if rf is not None:
                out.append(rf)
        # When the rfactor space applies, plain tiling would vectorize a spatial axis that
        # strides through every buffer read: its candidates only dilute the search.
        return out or self._apply_tiling(sch, block)

    def _vector_lens(self, sch, block, r_loops):
        kinds = contiguous_axis_types(sch, block)
        if not kinds or any(k != REDUCTION for k in kinds):
            return []
        extent = const_extent(sch.get(r_loops[-1]))
        return [n for n in self.reduction_vector_lens if extent % n == 0 and extent > n]

    def _apply_tiling(self, sch, block):
        caches = [False, True] if self.reuse_write.req == "may" else \
            [self.reuse_write.req == "must"]
        out = []
        for cache in caches:
            for lanes in self._pack_lanes(sch, block):
                packed = self._tile(sch.copy(), block, cache, pack=lanes)
                if packed is not None:
                    out.append(packed)
            out.append(self._tile(sch.copy(), block, cache))
        return out

    def _pack_lanes(self, sch, block):
        """The panel widths of the packed spaces (none when no read can be packed)."""
        if not self.pack_reads or packable_read(sch, block) is None:
            return []
        s_loops, _ = classify_loops(sch, block)
        extent = const_extent(sch.get(s_loops[-1]))
        return [n for n in PACK_LANES if extent % n == 0]

    def _tile(self, sch, block, cache, pack=0):
        s_loops, r_loops = classify_loops(sch, block)
        # A packed space has one vector length, the panel width its layout is made for; over
        # a packed panel the register tile runs best through long reductions.
        s_tiles = tile_loops(sch, s_loops, r_loops, self.structure, self.max_innermost_factor,
                             vector_lens=(pack,) if pack else VECTOR_LENS,
                             max_innermost_reduction=PACKED_REDUCTION if pack else None)
        # The rows of the register tile (the innermost tile next to the vector lanes) are
        # unrolled whatever unroll step is sampled, as in the rfactor space.
        if len(s_tiles[-1]) > 1:
            sch.unroll(s_tiles[-1][-2])
        if cache and len(sch.get(block).writes) == 1:
            writeback = sch.cache_write(block, 0, self.reuse_write.scope)
            fold_epilogue(sch, writeback)
            level = min(self.reuse_write.levels[0], len(s_tiles)) - 1
            sch.reverse_compute_at(writeback, s_tiles[level][-1])
        if pack and not pack_read(sch, block, s_tiles, pack):
            return None
        sch.annotate(block, TILED, 1)
        return sch

    def _apply_rfactor(self, sch, block, lanes):
        """The vector-accumulator design space, or None when a primitive refuses it."""
        try:
            s_loops, r_loops = classify_loops(sch, block)
            _, lane = sch.split(r_loops[-1], [None, lanes])
            rf = sch.rfactor(lane, factor_axis=len(s_loops))
            rf_s, rf_r = [], []
            realize = sch.get_sref(rf).realize
            lane_var = sch.get(lane).loop_var
            for loop_rv in sch.get_loops(rf):
                loop = sch.get(loop_rv)
                if loop.loop_var is lane_var:
                    continue
                types = loop_bound_iter_types(realize, loop.loop_var)
                (rf_s if types == {SPATIAL} else rf_r if types == {REDUCTION} else [])\
                    .append(loop_rv)
            s_tiles = tile_loops(sch, rf_s, rf_r, RF_STRUCTURE, RF_COLS, inner=[lane],
                                 vector_lens=(), row_tile=RF_ROWS, row_lens=RF_ROW_LENS,
                                 col_lens=RF_COL_LENS)
            # The register tile is unrolled whatever unroll step is sampled: a C compiler
            # keeps an accumulator array in registers only when every index is a constant.
            for loop in s_tiles[-1]:
                sch.unroll(loop)
            at = s_tiles[min(self.reuse_write.levels[0], len(s_tiles)) - 1][-1]
            writeback = sch.cache_write(rf, 0, "local")
            sch.compute_inline(writeback)
            sch.reverse_compute_at(block, at)
            consumers = sch.get_consumers(block)
            for consumer in consumers:
                sch.reverse_compute_at(consumer, at)
            sch.annotate(rf, TILED, 1)
            sch.annotate(block, TILED, 1)
            return sch
        except schedule_errors():
            return None
