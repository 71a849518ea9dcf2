"""Cancellation polls of generated C kernels: where loops check the VM's limits.

A kernel reads its run's context once on entry (``RVMBackendGetContext``, see
rvm/include/rvm/c_runtime_api.h). A poll (``RVM_POLL()``) counts one against
the run's step budget, kept in a register, and loads the context's cancel flag,
which the runtime sets when the VM's time_limit passes or on Ctrl-C. Polls sit
at the back-edges of outer loops only: the first statement of the body of a
loop that encloses another loop, of a parallel loop, and of a while loop,
except ``#pragma omp simd`` loops, which may not be left (loops inside one
poll, and leave by ``break``). An innermost loop stays free of them (it
vectorizes) unless its extent is unknown or larger than ``STRIP``: it is then
strip-mined into strips of ``STRIP`` iterations, with the poll on the strip
loop.

When a poll fires, serial code returns the error at once (freeing live
workspaces). A parallel loop becomes an OpenMP region that shares the
iterations out itself, one contiguous block per thread as ``schedule(static)``
does, so a thread whose poll fires leaves its block (``break``, level by level
through the loops nested in it); each thread counts its polls in a private
copy summed at the end of the region (``reduction(+:rvm_polls)``), and the
kernel reports after it.
"""
from rvm.codegen.c.prologue import c_string
from rvm.tir import expr as E
from rvm.tir.stmt import For, ForKind, While

STRIP = 1 << 16  # iterations of an innermost loop between two polls
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
        for name in ("body", "then_case", "else_case"):
            child = getattr(s, name, None)
            if child is not None and not isinstance(child, E.PrimExpr):
                stack.append(child)
        stack.extend(getattr(s, "seq", ()) or ())
    return False


def needs_strips(loop):
    """Whether innermost serial ``loop`` is strip-mined (extent unknown or above STRIP)."""
    extent = loop.extent
    return ENABLED and loop.kind != ForKind.PARALLEL and not (isinstance(extent, E.IntImm)
                                                 and extent.value <= STRIP)


class PollMixin:
    """The parts of CEmitter that emit polls (``polls``: how many were emitted)."""

    def init_polls(self):
        self.polls = 0
        self.in_simd = 0  # inside a ``#pragma omp simd`` loop, which may not be left

    def emit_poll(self, in_region=False):
        """Emits the poll at the top of a loop body (``in_region``: the body of the loop
        that open_parallel_region shares out)."""
        if not ENABLED:
            return
        self.polls += 1
        self.uses_context = True
        if in_region or self.in_parallel or self.in_simd:
            self.emit("if (RVM_POLL()) break;")
        else:
            self.emit(f"if (RVM_POLL()) {self.stopped()}")

    def open_parallel_region(self, ctype, start, end, var):
        """Opens the OpenMP region of a parallel loop over [start, end) and shares its
        iterations out as ``schedule(static)`` does (one contiguous block per thread), so a
        thread whose poll fires can leave its block; returns the C bounds of the block."""
        self.polls += 1  # the region's reduction clause names rvm_polls
        self.uses_context = True
        self.lines.append("#pragma omp parallel reduction(+:rvm_polls)")
        self.emit("{")
        self.indent += 1
        lo, hi, n, chunk, first, last = (f"rvm_{k}_{var}" for k in
                                         ("lo", "hi", "n", "chunk", "first", "last"))
        self.emit(f"const int64_t {lo} = (int64_t)({start}), {hi} = (int64_t)({end});")
        self.emit(f"const uint64_t {n} = {hi} > {lo} ? (uint64_t){hi} - (uint64_t){lo} : 0;")
        self.emit(f"const uint64_t {chunk} = {n} / (uint64_t)rvm_omp_threads() + "
                  f"({n} % (uint64_t)rvm_omp_threads() != 0);")
        self.emit(f"const uint64_t {first} = (uint64_t)rvm_omp_thread() * {chunk} < {n} ? "
                  f"(uint64_t)rvm_omp_thread() * {chunk} : {n};")
        self.emit(f"const uint64_t {last} = {n} - {first} > {chunk} ? {first} + {chunk} : {n};")
        return (f"({ctype})(int64_t)((uint64_t){lo} + {first})",
                f"({ctype})(int64_t)((uint64_t){lo} + {last})")

    def open_strips(self, ctype, start, end, var):
        """Opens the strip loop of an innermost loop over [start, end); returns the C bounds
        of the strip."""
        first, last, stop = f"rvm_s_{var}", f"rvm_e_{var}", f"rvm_end_{var}"
        self.emit(f"const {ctype} {stop} = {end};")
        self.emit(f"for ({ctype} {first} = {start}, {last}; {first} < {stop}; "
                  f"{first} = {last}) {{")
        self.indent += 1
        self.emit_poll()
        self.emit(f"{last} = (uint64_t)(int64_t){stop} - (uint64_t)(int64_t){first} > "
                  f"{STRIP}u ? ({ctype})((int64_t){first} + {STRIP}) : {stop};")
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
