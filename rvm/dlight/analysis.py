"""What the default rules read off a kernel: its top-level blocks, loop kinds and work.

A symbolic extent counts as ``SYMBOLIC_EXTENT`` iterations when a rule
estimates work, so the choice stays deterministic for dynamic shapes.
"""
from contextlib import contextmanager
from contextvars import ContextVar

from rvm.tir.expr import Call, IterVar
from rvm.tir.schedule.analysis import const_extent, is_reduction_block, loop_bound_iter_types
from rvm.tir.schedule.error import ScheduleError
from rvm.tir.stmt_functor import post_order_visit

SYMBOLIC_EXTENT = 64
# Thresholds, in iterations of the innermost statement (symbolic extents estimated), from
# which a rule runs a kernel's outer loop on threads: one place for all of them but the
# matmul rule's MATMUL_PARALLEL_MIN_WORK (2^21 multiply-adds, about 40 us on one core).
# The thread pool never waits for a worker that starts late (native/src/thread_pool.c): a
# region whose worker does not join cost its caller 0.04 us more than a serial loop
# (benchmarks/bench_threads.py's parallel kernel, 2 rows of 4, the other core busy), and
# one it joins the worker's wake-up, a few us. A tiled rule's threshold is therefore a
# power of two near 40 us of its kernels' serial work, from their cost per iteration on one
# core (thread CPU time):
#   - PARALLEL_MIN_WORK, loop nests in general (generic and attention rules): their
#     statements cost from a fraction of a ns to a libm call; it was set at about a
#     millisecond before the pool stopped waiting for late workers (a 64x128x784 matmul
#     took 0.27 ms serial and 15 ms in parallel on 2 busy cores), and is kept.
#   - MATMUL_PARALLEL_MIN_WORK, a register-tiled matmul: at 100 GFLOPS a core does 2^21
#     multiply-adds in about 40 us; a 64 x 784 x 128 linear layer (6.4M) takes two cores.
#   - CONV_PARALLEL_MIN_WORK, the conv rule's tile: 0.023-0.055 ns a multiply-add
#     (the CNN's 8 -> 16 channel conv at batch 64: 14.4 million in 0.60-0.79 ms; the
#     ResNet's 3 x 3 ones at batch 1, 0.3-0.6 million in 8-18 us), so 2^18 is 6-14 us,
#     below the 40 us of the others: the parallel form of this tile costs nothing on one
#     thread (the ResNet's 16 -> 16 conv on 16 x 16 at batch 1: 0.0139 against 0.0138 ms
#     serial) and a worker that joins halves a tile of rows that takes 3-4 times its
#     wake-up, which puts those 3 x 3 convs of a model built for batch 1 on two cores, as
#     onnxruntime runs them (at a symbolic batch, estimated 64, they were parallel already).
#   - WINDOW_PARALLEL_MIN_WORK, the window rule's tile of output channels by columns
#     (a dense conv on a prime-wide map): 0.04-0.06 ns a multiply-add (16 -> 26 and 32
#     channels on 17 x 17 maps, batch 4).
#   - POOL_PARALLEL_MIN_WORK, the window rule's pools (no row tile, one buffer read): 0.13-0.34
#     ns an iteration (the ResNet's 3 x 3 / 2 max pool at batch 8, 0.3 million in 0.038 ms;
#     2 x 2 max pools), so 2^17 is 17-45 us. Their parallel form takes 0.99-1.09x the CPU
#     time of the serial form on one thread (64 x 32 x 28 x 28 2 x 2 pool: 0.253 against
#     0.256 ms; the ResNet's: 0.038-0.045 against 0.038-0.042 ms; it took 1.8x before the
#     window rule fused two loops only).
#   - PAD_PARALLEL_MIN_WORK, the padded copy in front of a conv or pool (an elementwise loop
#     nest, its outer loops unfused): 0.08-0.11 ns an element (the ResNet's pads at batch 8,
#     3 x 70 x 70 to 32 x 10 x 10 maps, 0.03-0.15 million elements in 2.8-13 us), so 2^17 is
#     11-14 us; its parallel form (threads over the batch) takes the same CPU time on one
#     thread (0.96-1.12x), and a built batch of 1 runs one thread (a team is capped by the
#     loop's iterations).
#   - GROUPED_PARALLEL_MIN_WORK, the window rule without rows for depthwise and grouped
#     convs (whose input read follows the output channel): 0.075 ns a depthwise
#     multiply-add, but in the parallel form a grouped conv takes 4x the CPU time of the
#     serial form on one thread (8 x 64 x 16 x 16, 8 groups: 1.73 against 0.41 ms; a
#     depthwise one 1.05x, 0.066 against 0.063 ms), more than a second core gives back.
#     They stay serial up to the general threshold.
PARALLEL_MIN_WORK = 1 << 24
MATMUL_PARALLEL_MIN_WORK = 1 << 21
CONV_PARALLEL_MIN_WORK = 1 << 18
WINDOW_PARALLEL_MIN_WORK = 1 << 20
POOL_PARALLEL_MIN_WORK = 1 << 17
PAD_PARALLEL_MIN_WORK = 1 << 17
GROUPED_PARALLEL_MIN_WORK = PARALLEL_MIN_WORK
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


def reduction_then_epilogue(sch, blocks):
    """``blocks[0]`` when ``blocks`` are one reduction block writing one buffer, under at
    least three loops all spatial but the innermost, a reduction (a matmul's or attention's
    nest), followed by at most one block without an init (an elementwise epilogue); else
    None."""
    if not 1 <= len(blocks) <= 2:
        return None
    mm = blocks[0]
    blk = sch.get(mm)
    if not is_reduction_block(blk) or len(blk.writes) != 1:
        return None
    if len(blocks) == 2 and sch.get(blocks[1]).init is not None:
        return None
    kinds = loop_kinds(sch, mm)
    if len(kinds) < 3 or kinds[-1] != "R" or any(kind != "S" for kind in kinds[:-1]):
        return None
    return mm


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


_SHARED_INLINING = ContextVar("rvm_dlight_shared_inlining", default=None)


@contextmanager
def shared_inlining():
    """Within the block, ``inline_producers`` inlines a function once for all the fresh
    schedules of it: a call on a schedule that has run no primitive yet, of a function (and
    with a ``keep``) already inlined that way in the block, makes that schedule a copy of the
    first result (its module, trace and handles, ``Schedule.copy``) and returns the same
    blocks. ``trace_default_schedule`` tries each rule on a fresh schedule of one kernel, and
    the rules starting with ``inline_producers`` (matmul, attention, generic) share one."""
    token = _SHARED_INLINING.set({})
    try:
        yield
    finally:
        _SHARED_INLINING.reset(token)


def _keep_none(block):
    return False


def inline_producers(sch, keep=_keep_none):
    """Inlines every top-level elementwise block whose result only feeds other blocks
    (compute_inline refuses blocks writing a function output) and ``keep`` does not hold
    for; returns the blocks left.
    A block calling a LIBM_CALLS function that feeds several blocks stays (softmax's exp,
    read by the sum and by the normalization, is computed once, not once per reader).
    Under ``shared_inlining`` a fresh schedule of a function inlined before starts from a
    copy of that result."""
    shared = _SHARED_INLINING.get()
    key = None if shared is None else _fresh_key(sch, keep)
    if key is not None and key in shared:
        _, done, blocks = shared[key]
        vars(sch).update(vars(done.copy()))
        return list(blocks)
    blocks = _inline_producers(sch, keep)
    if key is not None:
        # the functions stay referenced, so the ids in the key name them while it lives
        shared[key] = (list(sch.state.mod.functions.values()), sch.copy(), list(blocks))
    return blocks


def _fresh_key(sch, keep):
    """What a schedule that has run no primitive holds (its functions, by identity, and
    options) and ``keep``; None once a primitive ran."""
    if sch.trace.insts:
        return None
    functions = tuple((gv.name_hint, id(func)) for gv, func in sch.state.mod.functions.items())
    return (functions, sch.func_working_on, sch.debug, sch.enable_check,
            sch.error_render_level, keep)


def _inline_producers(sch, keep):
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
