"""What the default rules read off a kernel: its top-level blocks, loop kinds and work.

A symbolic extent counts as ``SYMBOLIC_EXTENT`` iterations when a rule
estimates work, so the choice stays deterministic for dynamic shapes.
"""
from rvm.tir.expr import Call, IterVar
from rvm.tir.schedule.analysis import const_extent, loop_bound_iter_types
from rvm.tir.schedule.error import ScheduleError
from rvm.tir.stmt_functor import post_order_visit

SYMBOLIC_EXTENT = 64
# Iterations of the innermost statement below which a loop nest stays on one thread
# (about a millisecond of serial work). A fork and join costs microseconds on a quiet
# machine, but while another process holds a core an OpenMP region waits for a descheduled
# thread: measured on 2 busy cores, a 64x128x784 matmul took 0.27 ms serial and 15 ms in
# parallel, a 512^3 one 15 ms and 16 ms. Only work that long pays the risk.
PARALLEL_MIN_WORK = 1 << 24
SPATIAL, REDUCTION = IterVar.DataPar, IterVar.CommReduce
# Math functions the C backend calls in libm, one element at a time (no vector form without
# -ffast-math): many times the cost of a load, so worth a buffer to compute them once.
LIBM_CALLS = frozenset(f"tir.{name}" for name in (
    "exp", "exp2", "log", "log2", "log10", "log1p", "pow", "tanh", "sigmoid", "erf", "sin",
    "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh"))


def top_blocks(sch):
    """The blocks directly under the root block, in program order."""
    return list(sch.get_child_blocks(sch.get_block("root")))


def extent_of(sch, loop):
    """The loop's constant extent, or SYMBOLIC_EXTENT."""
    value = const_extent(sch.get(loop))
    return SYMBOLIC_EXTENT if value is None else value


def work(sch, loops):
    """Iterations of the body under ``loops`` (symbolic extents estimated)."""
    total = 1
    for loop in loops:
        total *= extent_of(sch, loop)
    return total


def loop_kinds(sch, block):
    """For each loop above ``block``: "S" (feeds spatial axes only), "R" (reduction axes
    only), "-" (no axis) or None for a loop feeding both kinds or an opaque axis."""
    realize = sch.get_sref(block).realize
    kinds = []
    for loop in sch.get_loops(block):
        types = loop_bound_iter_types(realize, sch.get(loop).loop_var)
        if not types:
            kinds.append("-")
        elif types == {SPATIAL}:
            kinds.append("S")
        elif types == {REDUCTION}:
            kinds.append("R")
        else:
            kinds.append(None)
    return kinds


def calls_libm(block):
    """True when the block's body calls one of LIBM_CALLS."""
    found = []
    post_order_visit(block.body, lambda node: found.append(node)
                     if isinstance(node, Call) and node.op in LIBM_CALLS else None)
    return bool(found)


def inline_producers(sch, keep=lambda block: False):
    """Inlines every top-level elementwise block whose result only feeds other blocks
    (compute_inline refuses blocks writing a function output) and ``keep`` does not hold
    for; returns the blocks left.
    A block calling a LIBM_CALLS function that feeds several blocks stays (softmax's exp,
    read by the sum and by the normalization, is computed once, not once per reader)."""
    changed = True
    while changed:
        changed = False
        blocks = top_blocks(sch)
        for block in blocks[:-1]:
            if any(iv.iter_type != SPATIAL for iv in sch.get(block).iter_vars):
                continue
            if calls_libm(sch.get(block)) and len(sch.get_consumers(block)) > 1:
                continue
            if keep(sch.get(block)):
                continue
            try:
                sch.compute_inline(block)
            except (ScheduleError, ValueError):
                continue
            changed = True
            break
    return top_blocks(sch)


def fuse_or_first(sch, loops):
    """``loops`` (outermost first, nested) fused into one loop, or, when their variables'
    dtypes differ (int32 and int64 loops in one nest, which fuse refuses) or a loop but
    the outermost has a symbolic extent, the first of them longer than 1; None without
    loops. (A fused index recovers each loop by dividing by the extents inside it: by
    constants the bounds prover of the C backend follows, by a symbolic extent it does
    not, and every access of the kernel would be range-checked.)"""
    if not loops:
        return None
    symbolic_inside = any(const_extent(sch.get(loop)) is None for loop in loops[1:])
    if not symbolic_inside and len({sch.get(loop).loop_var.dtype for loop in loops}) == 1:
        return sch.fuse(*loops) if len(loops) > 1 else loops[0]
    return next((loop for loop in loops if extent_of(sch, loop) > 1), loops[0])


def parallel_outer(sch, loops, total, info, min_work=PARALLEL_MIN_WORK):
    """Fuses ``loops`` (``fuse_or_first``) and runs the result in parallel when ``total``
    iterations of work pay for threads (``min_work``, by default PARALLEL_MIN_WORK) and the
    CPU has cores."""
    outer = fuse_or_first(sch, loops)
    if outer is not None and info.cores > 1 and total >= min_work:
        sch.parallel(outer)
    return outer


def write_dtype(sch, block):
    """The dtype of the block's first written buffer."""
    return sch.get(block).writes[0].buffer.dtype
