"""The CPU rule for attention scores: a batched NT matmul over a short reduction.

Applies to a kernel whose top-level blocks, after elementwise producers are inlined
(the strided slice of a causal mask), are one reduction block
``S[b.., i, j] += Q[b.., i, k] * K[b.., j, k]`` with batch axes ``b..`` and a constant
reduction ``k`` (the head size), and optionally one elementwise epilogue (the scale, the mask add), when the
matmul rule left it: its NT form needs constant rows and columns and a reduction longer
than one vector, and computes each output as a dot product of ``k`` elements summed
across the lanes of a vector, which costs more than the products when ``k`` is a few
vectors long. So the sequence here is symbolic (BERT's and GPT-2's scores) or short (the
encoder's 7 tokens, a head size of one vector).

``prepare`` moves the column loop outside the row loop and partitions it into whole
panels of ``width`` columns and a remainder (``Schedule.partition_rows`` on the column
loop), so that no vector loop carries a predicate: the C compiler does not vectorize a
predicated accumulation. A constant column count that fits one panel stays as it is
(the panel is that wide). On the panels, K is transposed into ``K_t[b.., k, j]`` first (a
copy of ``s x k`` elements per batch and head, against the ``s x s x k`` products), and
the scores become an NN matmul whose rows of K_t are contiguous along the output's
columns:

    K_t[b.., k, j] = K[b.., j, k]
    for b..  (fused; parallel above PARALLEL_MIN_WORK)
        for j_o, i:
            acc[width] = 0                                (vectorized)
            for k:
                for j_i in vectorized(width):  acc += Q[i, k] * K_t[k, j]
            S[.., i, j] = epilogue(acc)                   (vectorized)

``width`` is ``MAX_VECTORS`` vector registers (the matmul rule's register tile of one
row, ``_register_tile``): each panel of K_t (``k x width``) stays in cache while every
row reads it. The remaining columns (fewer than ``width``) are one dot product over k
per output, as the generic rule computes them, and their epilogue a nest of its own.

>>> from rvm.dlight.cpu.attention import AttentionScores
>>> AttentionScores.name
'attention'
"""
from rvm.dlight.analysis import (
    PARALLEL_MIN_WORK, REDUCTION, fuse_or_first, inline_producers,
    reduction_then_epilogue, top_blocks, work, write_dtype,
)
from rvm.dlight.cpu.matmul import MAX_VECTORS, _register_tile
from rvm.dlight.rule import ScheduleRule
from rvm.tir.free_vars import used_vars
from rvm.tir.schedule.analysis import const_extent
from rvm.tir.schedule.primitive.partition_rows import TAIL


class AttentionScores(ScheduleRule):
    """Schedules attention's Q.K^T (module docstring)."""

    name = "attention"

    def prepare(self, sch, info):
        """The column loop moved outside the row loop in every nest, then partitioned into
        whole panels of ``width`` columns and a remainder (``sch.partition_rows``, traced):
        the panels' vector loops need no predicate (a predicated accumulation is not
        vectorized by the C compiler). Constant columns that fit one panel stay as they
        are (the panel is that wide). False when the kernel is not attention scores."""
        blocks = inline_producers(sch)
        found = _find_scores(sch, blocks)
        if found is None:
            return False
        if _one_panel(sch, blocks[0], info):
            return True
        depth = len(sch.get_loops(blocks[0])) - 3
        for block in blocks:
            *batch, i, j = sch.get_loops(block)[:depth + 2]
            sch.reorder(j, i)
        sch.partition_rows(depth, _width(sch, blocks[0], info))
        return True

    def apply(self, sch, info):
        blocks = top_blocks(sch)
        if _find_scores(sch, blocks) is not None and _one_panel(sch, blocks[0], info):
            return _schedule_panels(sch, blocks[0], info)
        half = len(blocks) // 2
        if len(blocks) not in (2, 4) or \
                [sch.get(b).name_hint for b in blocks[half:]] != \
                [sch.get(b).name_hint + TAIL for b in blocks[:half]]:
            return False
        mm, tail = blocks[0], blocks[half]
        if _find_scores(sch, [mm]) is None:
            return False
        _schedule_panels(sch, mm, info)
        # the remaining columns, row by row: a dot product over k per output (a SIMD
        # reduction once LocalizeReduction keeps its accumulator in a register)
        *batch, j, i, k = sch.get_loops(tail)
        sch.reorder(i, j)
        # one batch loop, not a fused one: LocalizeReduction needs the output's unit stride
        _parallel(sch, batch[:1], work(sch, sch.get_loops(tail)), info)
        for epilogue in blocks[half + 1:]:  # its output is shared with the panels': a nest
            *batch, j, i = sch.get_loops(epilogue)
            sch.reorder(i, j)
            _parallel(sch, batch[:1], work(sch, sch.get_loops(epilogue)), info)
        return True


def _one_panel(sch, mm, info):
    """True when the scores have a constant column count that fits one panel."""
    columns = const_extent(sch.get(sch.get_loops(mm)[-2]))
    return columns is not None and columns <= _width(sch, mm, info)


def _schedule_panels(sch, mm, info):
    """K transposed, then the register tile of one row by ``width`` columns per panel (the
    loops ``*batch, j_0, j_1, i, k`` that ``prepare`` partitioned, or ``*batch, i, j, k``
    when the columns fit one panel), the batch loops parallel above the work threshold."""
    _, k_read = _find_scores(sch, [mm])
    loops = sch.get_loops(mm)
    total = work(sch, loops)
    if _one_panel(sch, mm, info):
        *batch, i, j, k = loops
        panels, width = batch, const_extent(sch.get(j))
    else:
        *batch, j_0, j, i, k = loops
        panels, width = [*batch, j_0], _width(sch, mm, info)
        if const_extent(sch.get(j_0)) is None:
            total //= width  # the panel count stands for SYMBOLIC_EXTENT columns
    _transpose_keys(sch, mm, k_read, info)
    _register_tile(sch, mm, panels, i, None, j, k, width)
    _parallel(sch, batch, total, info)
    return True


def _width(sch, block, info):
    """The columns of one panel: MAX_VECTORS vector registers."""
    return MAX_VECTORS * info.lanes(write_dtype(sch, block))


def _parallel(sch, batch, total, info):
    """The batch loops fused and parallel when ``total`` iterations pay for threads."""
    outer = fuse_or_first(sch, batch) if batch else None
    if outer is not None and info.cores > 1 and total >= PARALLEL_MIN_WORK:
        sch.parallel(outer)


def _find_scores(sch, blocks):
    """(block, index of the read of K) when ``blocks`` are a batched NT matmul with a
    constant reduction and symbolic columns, and at most one elementwise epilogue. The axes
    are read off the block (its write ``S[.., i, j]``), not its loops, which ``prepare``
    reorders."""
    mm = reduction_then_epilogue(sch, blocks)
    if mm is None:
        return None
    blk = sch.get(mm)
    reduce = [iv for iv in blk.iter_vars if iv.iter_type == REDUCTION]
    out = blk.writes[0].region
    # batched (attention's batch and heads): a plain NT product is a dense layer's
    if len(reduce) != 1 or len(out) < 3 or const_extent_of(reduce[0]) is None:
        return None
    k_axis = reduce[0].var
    i_axis, j_axis = out[-2].min, out[-1].min
    axes = {id(iv.var): iv for iv in blk.iter_vars}
    if id(i_axis) not in axes or id(j_axis) not in axes:
        return None
    k_reads = []
    for index, region in enumerate(blk.reads):
        ranges = region.region
        if len(ranges) < 2 or any(getattr(r.extent, "value", None) != 1 for r in ranges):
            return None
        if ranges[-2].min is j_axis and ranges[-1].min is k_axis:
            k_reads.append(index)
        elif not (ranges[-2].min is i_axis and ranges[-1].min is k_axis):
            return None  # an operand that is neither Q[.., i, k] nor K[.., j, k]
        if any(id(i_axis) in used_vars(r.min) or id(j_axis) in used_vars(r.min)
               for r in ranges[:-2]):
            return None
    return (mm, k_reads[0]) if len(k_reads) == 1 else None


def const_extent_of(iter_var):
    """The constant extent of a block axis, or None."""
    return getattr(iter_var.dom.extent, "value", None)


def _transpose_keys(sch, mm, k_read, info):
    """Copies K[b.., j, k] into K_t[b.., k, j] before the matmul (module docstring)."""
    copy = sch.cache_read(mm, k_read, "global", consumer_blocks=[mm])

    def transposed(*idx):
        *batch, j, k = idx
        return (*batch, k, j)

    sch.transform_layout(copy, ("write", 0), transposed)
    *batch, j, k = sch.get_loops(copy)
    sch.reorder(*batch, k, j)
    _parallel(sch, batch, work(sch, sch.get_loops(copy)), info)
