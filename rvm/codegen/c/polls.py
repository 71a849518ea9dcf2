"""Cancellation polls of generated C kernels: where loops check the VM's limits.

A kernel reads its run's context once on entry (``RVMBackendGetContext``, see
rvm/include/rvm/c_runtime_api.h). A poll (``RVM_POLL()``) counts one against
the run's step budget, kept in a register, and loads the context's cancel flag,
which the runtime sets when the VM's time_limit passes or on Ctrl-C. Polls sit
at the back-edges of outer loops only: the first statement of the body of a
loop that encloses another loop, of a parallel loop, and of a while loop,
except ``#pragma omp simd`` loops, which may not be left (loops inside one
poll, and leave by ``break``), and except unrolled loops whose whole nest runs at
most ``STRIP`` times (register tiles: ``is_small_tile``). An innermost loop stays
free of them (it vectorizes) unless its extent is unknown or larger than ``STRIP``: it
is then strip-mined into strips of ``STRIP`` iterations, with the poll on the strip
loop, which counts the strip's iterations against the budget. So is a simd loop of such
an extent that encloses other loops: their polls only break out of them, and the simd
loop's own iterations would run on.

A serial loop nested in another loop whose body is a small poll-free nest (``strip_body``:
constant extents, at most ``STRIP // 2`` iterations, no parallel or while loop: a register tile's
reduction loop over its unrolled rows and vector columns) does not poll per iteration,
where the poll would cost registers and instructions in the hottest loop of a matmul: it
polls once before it when its whole nest runs at most ``STRIP`` times, else it runs in
strips of ``STRIP // body`` iterations polled between them; either poll counts the loop's
iterations, as its per-iteration polls did. A loop's poll, wherever it sits, stands for its
body when that body runs at most ``STRIP`` times (``covers_body``): the loops inside poll no
more (the row-tile loop of a matmul polls once per tile, its reduction loop not at all).

When a poll fires, serial code returns the error at once (freeing live
workspaces). A parallel loop becomes an OpenMP region that shares the
iterations out itself: they are cut into contiguous chunks (up to
``CHUNKS_PER_THREAD`` per thread) that the team's threads take in turn from a
shared counter, so a thread that starts late (descheduled by another process)
finds its share taken by the others instead of holding the loop up (the
region runs on rvm's thread pool, which does not wait for a thread that has
not entered it: native/src/thread_pool.c). Which
thread runs a chunk never changes a result: a parallel loop's iterations are
independent and each runs its body as a serial loop would. A thread whose poll
fires leaves its chunk (``break``, level by level through the loops nested in
it) and takes no other; each thread counts its polls in a private copy summed
at the end of the region (``reduction(+:rvm_polls)``), and the kernel reports
after it. The team's size is the runtime's thread count
(``RVMBackendGetNumThreads``, rvm.runtime.threads), capped by the target's
``-num-cores`` and by the number of iterations.
"""
from rvm.codegen.c.prologue import c_string
from rvm.tir import expr as E
from rvm.tir.stmt import For, ForKind, While

STRIP = 1 << 16  # iterations of an innermost loop between two polls
CHUNKS_PER_THREAD = 8  # chunks of a parallel loop per thread of its team (rvm_chunks)
# PrimFunc attribute: the most threads its parallel loops use (the build target's -num-cores).
NUM_CORES_ATTR = "rvm.num_cores"
# Internal switch for measuring what polls cost (benchmarks/bench_kernel_polls.py): False
# emits kernels without polls or strips, which the VM's step and time limits cannot stop.
ENABLED = True


def contains_loop(stmt):
    """Whether statement ``stmt`` has a For or While loop inside it (itself excluded)."""
    stack = [stmt]
    first = True
    while stack:
        s = stack.pop()
        if not first and isinstance(s, (For, While)):
            return True
        first = False
        stack.extend(_child_stmts(s))
    return False


def nest_iterations(stmt):
    """How many times the innermost bodies under ``stmt`` run (a loop: its extent times its
    body's count; a sequence: the sum), or None when some loop's extent is not a constant
    or a while loop is among them."""
    if isinstance(stmt, While):
        return None
    if isinstance(stmt, For):
        body = nest_iterations(stmt.body)
        return None if body is None or not isinstance(stmt.extent, E.IntImm) else \
            stmt.extent.value * body
    counts = [nest_iterations(c) for c in getattr(stmt, "seq", ()) or ()]
    branches = [nest_iterations(getattr(stmt, n)) for n in ("then_case", "else_case")
                if getattr(stmt, n, None) is not None]
    body = getattr(stmt, "body", None)
    if body is not None and not isinstance(body, E.PrimExpr):
        counts.append(nest_iterations(body))
    if branches:
        counts.append(None if None in branches else max(branches))
    if None in counts:
        return None
    return max(1, sum(counts))


def is_small_tile(loop):
    """Whether ``loop`` is an unrolled loop (a register tile) whose whole nest runs at most
    STRIP times: it has no poll of its own, its enclosing loop's poll covers it (a poll
    inside would also keep the compiler from sharing loads across the unrolled copies)."""
    if loop.kind != ForKind.UNROLLED:
        return False
    count = nest_iterations(loop)
    return count is not None and count <= STRIP


def covers_body(loop):
    """Whether the poll of ``loop`` (per iteration, between strips or before it) stands for
    its body: the body is a nest of constant extents running at most STRIP times per
    iteration, without parallel or while loops, so the loops in it need no polls of their
    own."""
    count = nest_iterations(loop.body)
    return count is not None and count <= STRIP and not _has_parallel(loop.body)


def strip_body(loop):
    """The iterations of ``loop``'s body (its nest's innermost bodies per iteration of it)
    when the body is a small poll-free nest (module docstring), else None: a body above
    ``STRIP // 2`` iterations keeps its poll per iteration (strips of one iteration each
    would poll as often); a body whose loops run no iterations (an extent of 0) counts one,
    its loop test."""
    count = nest_iterations(loop.body)
    if count is None or count > STRIP // 2 or _has_parallel(loop.body):
        return None
    return max(1, count)


def _child_stmts(s):
    """The statements directly inside ``s`` (a body, the branches, a sequence's items)."""
    children = [getattr(s, name, None) for name in ("body", "then_case", "else_case")]
    return [c for c in children if c is not None and not isinstance(c, E.PrimExpr)] + \
        list(getattr(s, "seq", ()) or ())


def _has_parallel(stmt):
    stack = [stmt]
    while stack:
        s = stack.pop()
        if isinstance(s, For) and s.kind == ForKind.PARALLEL:
            return True
        stack.extend(_child_stmts(s))
    return False


def needs_strips(loop):
    """Whether serial ``loop`` (innermost, or simd) is strip-mined (extent unknown or above
    STRIP)."""
    extent = loop.extent
    return ENABLED and loop.kind != ForKind.PARALLEL and not (isinstance(extent, E.IntImm)
                                                 and extent.value <= STRIP)


class PollMixin:
    """The parts of CEmitter that emit polls (``polls``: how many were emitted)."""

    def init_polls(self):
        self.polls = 0
        self.in_simd = 0  # inside a ``#pragma omp simd`` loop, which may not be left
        self.loop_depth = 0  # loops enclosing the statement being emitted
        self.covered = 0  # inside a loop whose poll before it or between strips covers it

    def emit_poll(self, in_region=False, count=None):
        """Emits the poll at the top of a loop body (``in_region``: the body of the loop
        that open_parallel_region shares out); ``count``, a C expression, is the number of
        iterations the poll stands for (one when None)."""
        if not ENABLED:
            return
        self.polls += 1
        self.uses_context = True
        test = "RVM_POLL()" if count is None else f"RVM_POLL_N({count})"
        if in_region or self.in_parallel or self.in_simd:
            self.emit(f"if ({test}) break;")
        else:
            self.emit(f"if ({test}) {self.stopped()}")

    def open_parallel_region(self, ctype, start, end, var):
        """Opens the OpenMP region of a parallel loop over [start, end) and opens the loop
        over the chunks its threads take in turn (see the module docstring), so a thread
        whose poll fires can leave; returns the C bounds of the chunk. The team has
        ``rvm_team`` threads: the runtime's thread count, capped by ``self.max_threads``
        (the target's -num-cores, 0 for none) and by the iterations."""
        self.polls += 1  # the region's reduction clause names rvm_polls
        self.uses_context = True
        lo, hi, n, team, chunk, next_, first, last = (
            f"rvm_{k}_{var}" for k in ("lo", "hi", "n", "team", "chunk", "next", "first",
                                       "last"))
        self.emit("{")
        self.indent += 1
        self.emit(f"const int64_t {lo} = (int64_t)({start}), {hi} = (int64_t)({end});")
        self.emit(f"const uint64_t {n} = {hi} > {lo} ? (uint64_t){hi} - (uint64_t){lo} : 0;")
        self.emit(f"const int {team} = rvm_team({n}, {int(self.max_threads)});")
        self.emit(f"const uint64_t {chunk} = rvm_chunk_size({n}, {team});")
        self.emit(f"uint64_t {next_} = 0;  /* the next chunk to take, shared by the team */")
        self.lines.append(f"#pragma omp parallel num_threads({team}) if({team} > 1) "
                          "reduction(+:rvm_polls)")
        self.emit("{")
        self.emit(f"  uint64_t {first}, {last};")
        self.emit(f"  while (!RVM_STOPPED() && rvm_take_chunk(&{next_}, {n}, {chunk}, &{first}, "
                  f"&{last})) {{")
        self.indent += 2
        return (f"({ctype})(int64_t)((uint64_t){lo} + {first})",
                f"({ctype})(int64_t)((uint64_t){lo} + {last})")

    def close_parallel_region(self):
        """Closes what open_parallel_region opened (the chunk loop, the region, the block)."""
        for _ in range(3):
            self.indent -= 1
            self.emit("}")

    def open_strips(self, ctype, start, end, var, length=STRIP):
        """Opens the strip loop of a loop over [start, end), strips of ``length`` iterations;
        returns the C bounds of the strip."""
        first, last, stop = f"rvm_s_{var}", f"rvm_e_{var}", f"rvm_end_{var}"
        self.emit(f"const {ctype} {stop} = {end};")
        self.emit(f"for ({ctype} {first} = {start}, {last}; {first} < {stop}; "
                  f"{first} = {last}) {{")
        self.indent += 1
        self.emit(f"{last} = (uint64_t)(int64_t){stop} - (uint64_t)(int64_t){first} > "
                  f"{length}u ? ({ctype})((int64_t){first} + {length}) : {stop};")
        self.emit_poll(count=f"(int64_t)((uint64_t)(int64_t){last} - (uint64_t)(int64_t){first})")
        return first, last

    def stopped(self):
        """The statement returning the error of a kernel stopped by a poll."""
        frees = "".join(f"RVMBackendFreeWorkspace(rvm_ctx, {name}); "
                        for name in reversed(self.heap))
        return (f"{{ {frees}return RVMBackendKernelStopped(rvm_ctx, {c_string(self.name)}, "
                "rvm_polls, rvm_poll_cap); }")

    def context_lines(self):
        """The declarations on entry: the context, and the poll counter and budget."""
        if not self.uses_context:
            return []
        lines = ["RVMKernelContext* const rvm_ctx = RVMBackendGetContext();"]
        if self.polls:
            lines += ["const int64_t rvm_poll_cap = rvm_ctx->polls_left;",
                      "int64_t rvm_polls = 0;"]
        return lines

    def context_exit_lines(self):
        """Before the kernel's successful return: its polls taken off the run's budget."""
        return ["rvm_ctx->polls_left -= rvm_polls;"] if self.polls else []
