"""Cancellation polls of generated C kernels: where loops check the VM's limits.

A kernel reads its run's context once on entry (``RVMBackendGetContext``, see
native/include/rvm/c_runtime_api.h). A poll (``RVM_POLL()``) counts one against
the run's step budget, kept in a register, and loads the context's cancel flag,
which the runtime sets when the VM's time_limit passes or on Ctrl-C. Polls sit
at the back-edges of outer loops only: the first statement of the body of a
loop that encloses another loop, of a parallel loop, and of a while loop. An
innermost loop stays free of them (it vectorizes) unless its extent is unknown
or larger than ``STRIP``: it is then strip-mined into strips of ``STRIP``
iterations, with the poll on the strip loop.

When a poll fires, serial code returns the error at once (freeing live
workspaces); inside a parallel loop the thread skips its remaining iterations
(``continue`` in the parallel loop, ``break`` in loops nested in it), each
thread counting its polls in a private copy summed at the end of the loop
(``reduction(+:rvm_polls)``), and the kernel reports after the loop.
"""
from rvm.codegen.c_prologue import c_string
from rvm.tir import expr as E
from rvm.tir.stmt import For, ForKind, While

STRIP = 1 << 16  # iterations of an innermost loop between two polls


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
    return loop.kind != ForKind.PARALLEL and not (isinstance(extent, E.IntImm)
                                                 and extent.value <= STRIP)


class PollMixin:
    """The parts of CEmitter that emit polls (``polls``: how many were emitted)."""

    def init_polls(self):
        self.polls = 0

    def emit_poll(self, parallel_loop=False):
        """Emits the poll at the top of a loop body (``parallel_loop``: the body of the
        outermost parallel loop)."""
        self.polls += 1
        self.uses_context = True
        if parallel_loop:
            self.emit("if (RVM_POLL()) continue;")
        elif self.in_parallel:
            self.emit("if (RVM_POLL()) break;")
        else:
            self.emit(f"if (RVM_POLL()) {self.stopped()}")

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
