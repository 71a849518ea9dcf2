"""The window rule's pools whose windows tile the input row: the taps inside the vector loop.

A pool whose window along the output's columns is as wide as its stride, without dilation
(the 2 x 2 / 2 and 3 x 3 / 3 max pools), reads every input column once: output column ``x``
reads ``s * x .. s * x + s - 1``. With the vector of columns outermost and the window inside
it, accumulating in the output,

    for (spatial loops but j, j_o):
        for j_i in vectorized(width):
            out[..] = init
            for ry, rx:  out[..] = max(out[..], in[.., s * j + rx])

the C compiler sees the ``s`` taps of a row of windows as one interleaved group of loads
(whole vectors and a lane permute), where the window rule's usual order (the window outside
the vector loop) has one strided access per loop, each needing a scalar epilogue that the
compiler pays for with half-width vectors and scalar lanes. On one core (thread CPU time):
the CNN's 2 x 2 max pools at batch 64, 64 x 8 x 28 x 28 -> 14 x 14 0.057 -> 0.038 ms and
64 x 16 x 14 x 14 -> 7 x 7 0.054 -> 0.025 ms; a 3 x 3 / 3 one (4 x 8 x 48 x 48) 7.6 -> 4.3 us.
Overlapping windows (the ResNet's 3 x 3 / 2, stride 1) measured slower in this order, and so
did an average pool (its sum then needs a buffer of its own before the division): they keep
the window rule's order.
"""
from rvm.tir.arith import simplify
from rvm.tir.expr import IntImm
from rvm.tir.free_vars import used_vars
from rvm.tir.schedule.analysis import const_extent
from rvm.tir.stmt_functor import substitute


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
        others = [v for v in axes if v is not x_axes[0]]
        stride = _last_index_step(index, x_axes[0], others)
        others = [v for v in axes if v is not r_axes[0]]
        dilation = _last_index_step(index, r_axes[0], others)
        if stride != extent or dilation != 1:
            return False
    return True


def schedule_tiling_pool(sch, block, outer, reduction, j_i):
    """Orders ``outer``, the vector loop ``j_i``, then the window (``reduction``) inside it,
    the pool accumulating in its output (module docstring); the caller threads ``outer``."""
    sch.reorder(*outer, j_i, *reduction)
    sch.decompose_reduction(block, reduction[0])
    sch.vectorize(j_i)
