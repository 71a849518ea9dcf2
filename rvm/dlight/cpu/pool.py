"""The window rule's pools: where the window goes relative to the vector of output columns.

The window rule's usual order keeps a row of accumulators and runs the window outside the
vector loop, one vector loop per tap:

    for (spatial loops but j, j_o):
        acc[width] = init
        for ry, rx:  for j_i in vectorized(width):  acc[j_i] = max(acc[j_i], in[..])
        out[..] = acc

gcc vectorizes each of those loops by itself: a row that is not whole vectors gets a tail
(half-width vectors, scalar lanes) per tap, and a strided tap (stride 2) whose loads leave a
gap needs a scalar epilogue, which for a row of one vector it pays with half-width vectors.
``pool_order`` picks one of two other orders for a pool (one buffer read, no row tile):

- ``schedule_tiling_pool``, for a pool whose window along the row is as wide as its stride,
  without dilation (the 2 x 2 / 2 and 3 x 3 / 3 max pools), and that writes the kernel's
  output (a max pool): the window inside the vector loop, accumulating in the output. The
  ``s`` taps of a window row then form one interleaved group of loads without a gap (whole
  vectors and a lane permute).
- ``schedule_window_inside``, for any other pool whose vector of columns is not a whole
  number of half-vectors (7, 14, 20, 28 columns on AVX-512): the window inside the vector
  loop with one accumulator per lane, so the row's tail is paid once rather than per tap.

Rows of whole half-vectors keep the usual order. Measured on one core (thread CPU time,
the default build's kernels, the same process, min over rounds):

    pool (output columns)                          usual       window inside   tiling
    64x8x28x28 2x2/2 max (14)  CNN batch 64        0.057 ms    0.057 ms        0.040 ms
    64x16x14x14 2x2/2 max (7)  CNN batch 64        0.054 ms    0.052 ms        0.023 ms
    4x8x48x48 3x3/3 max (16)                       7.6 us      4.3 us          4.3 us
    8x16x56x56 3x3/2 pad 1 max (28)                187 us      106 us          -
    8x16x28x28 3x3/2 pad 1 max (14)                39.7 us     29.7 us         -
    8x16x28x28 3x3/1 pad 1 max (28)                152 us      51 us           -
    64x16x14x14 2x2/2 avg (7)                      23.3 us     20.1 us         -
    ResNet 1x16x32x32 3x3/2 pad 1 max (16)         4.4 us      4.6 us          -
    8x16x32x32 3x3/2 pad 1 avg (16)                38.0 us     43.7 us         -
    8x16x16x16 3x3/2 pad 1 max (8)                 12.4 us     13.3 us         -

(the tiling order accumulates in the output, which for the rows that do not tile measured
slower still: 5.4 against 4.4 us for the ResNet's pool).
"""
from rvm.dlight.analysis import top_blocks
from rvm.tir.arith import simplify
from rvm.tir.expr import IntImm
from rvm.tir.free_vars import used_vars
from rvm.tir.schedule.analysis import const_extent
from rvm.tir.stmt_functor import substitute


def pool_order(sch, block, j, rx, width, lanes):
    """The order for pool ``block`` (module docstring) whose vector loop over ``j``'s axis is
    ``width`` columns of ``lanes``-wide vectors, ``rx`` its innermost window loop:
    ``schedule_tiling_pool``, ``schedule_window_inside``, or None for the window rule's usual
    order."""
    if sch.get(top_blocks(sch)[-1]) is sch.get(block) and tiles_its_row(sch, block, j, rx):
        return schedule_tiling_pool
    if width % max(lanes // 2, 1):
        return schedule_window_inside
    return None


def _last_index_step(index, var, others):
    """How much ``index`` grows when ``var`` goes from 0 to 1, the variables of ``others``
    at 0; None when that is not a constant or the growth is not the same from 1 to 2."""
    def at(value):
        values = {id(v): 0 for v in others}
        values[id(var)] = value
        return simplify(substitute(index, lambda v: values.get(id(v))))

    points = [at(k) for k in range(3)]
    if not all(isinstance(p, IntImm) for p in points):
        return None
    step = points[1].value - points[0].value
    return step if points[2].value - points[1].value == step else None


def tiles_its_row(sch, block, j, rx):
    """True when ``block`` (a pool: one buffer read besides its output) reads its input's last
    axis at ``s * x + r`` for the axis ``x`` of loop ``j`` and the axis ``r`` of the
    innermost reduction loop ``rx``, with ``s`` > 1 the extent of ``rx``: windows side by side
    along the row, neither overlapping nor leaving gaps."""
    blk, realize = sch.get(block), sch.get_sref(block).realize
    extent = const_extent(sch.get(rx))
    if extent is None or extent < 2:
        return False
    by_loop = {}
    for iv, value in zip(blk.iter_vars, realize.iter_values):
        for loop in (j, rx):
            if id(sch.get(loop).loop_var) in used_vars(value):
                by_loop.setdefault(id(loop), []).append(iv.var)
    x_axes, r_axes = by_loop.get(id(j), []), by_loop.get(id(rx), [])
    if len(x_axes) != 1 or len(r_axes) != 1:
        return False
    out = blk.writes[0].buffer
    inputs = [region for region in blk.reads if region.buffer is not out]
    if len({id(region.buffer) for region in inputs}) != 1:
        return False
    axes = [iv.var for iv in blk.iter_vars]
    for region in inputs:
        index = region.region[-1].min
        stride = _last_index_step(index, x_axes[0], [v for v in axes if v is not x_axes[0]])
        dilation = _last_index_step(index, r_axes[0], [v for v in axes if v is not r_axes[0]])
        if stride != extent or dilation != 1:
            return False
    return True


def schedule_tiling_pool(sch, block, outer, reduction, j_i):
    """Orders ``outer``, the vector loop ``j_i``, then the window (``reduction``) inside it,
    the pool accumulating in its output (module docstring); the caller threads ``outer``."""
    sch.reorder(*outer, j_i, *reduction)
    sch.decompose_reduction(block, reduction[0])
    sch.vectorize(j_i)


def schedule_window_inside(sch, block, outer, reduction, j_i):
    """Orders ``outer``, the vector loop ``j_i``, then the window (``reduction``) inside it,
    accumulating in a row of accumulators that the epilogue (inlined) writes back (module
    docstring); the caller threads ``outer``."""
    sch.reorder(*outer, j_i, *reduction)
    acc = sch.cache_write(block, 0, "local")
    for consumer in sch.get_consumers(acc):
        sch.reverse_compute_inline(consumer)
    sch.reverse_compute_at(acc, outer[-1])
    sch.vectorize(sch.get_loops(acc)[-1])
    sch.decompose_reduction(block, reduction[0])
    sch.vectorize(j_i)
