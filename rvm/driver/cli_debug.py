"""``rvm debug``: a small command loop over rvm.vm.Debugger.

    rvm debug model.rvm --input x.npy [--break BINDING] [--watch-nonfinite]

Commands (one a line, from stdin):

    b WHAT     a breakpoint: a Relax binding, else a kernel; ``N`` or ``FUNC@N``
               an instruction position (in the current function, or FUNC)
    s          step one instruction (into a called VM function)
    n          step over a call of a VM function
    c          continue to a breakpoint, the non-finite watch or the return
    f          finish the current VM function
    p REG      one register: ``%3``, ``3`` or a Relax variable name
    regs       the live registers of the current function
    where      the VM stack
    list       the bytecode around the current instruction, bindings beside it
    watch      stop at the first output holding a NaN or Inf (``watch off``: no)
    q          quit (the call is abandoned)
"""
from rvm.vm.debug_values import describe, format_value

HELP = __doc__.split("Commands (one a line, from stdin):", 1)[1].rstrip()


class CallFailed(Exception):
    """The debugged call raised (its error is the ``__cause__``)."""


class DebugShell:
    """The command loop: reads commands from ``lines``, writes to ``out`` (a print)."""

    def __init__(self, debugger, out=print):
        self.dbg = debugger
        self.out = out

    def show(self, stop):
        self.out(str(stop))
        if stop.reason == "nonfinite":
            for o in stop.detail["outputs"]:
                self.out(f"  output: {format_value(o)}")
            for i in stop.detail["inputs"]:
                self.out(f"  input:  {format_value(i)}")
        if stop.reason == "done":
            self.out(f"returned: {format_value(stop.detail['result'])}")
        else:
            self.out(self.dbg.listing(context=0).splitlines()[-1])

    def run(self, lines, prompt="(rvm) "):
        """Reads commands until ``q`` or the end of input."""
        for line in lines:
            line = line.strip()
            self.out(f"{prompt}{line}")
            if not line:
                continue
            if line in ("q", "quit"):
                break
            try:
                self.command(*line.split(None, 1))
            except CallFailed as failed:  # the debugged call raised: report it, keep the shell
                err = failed.__cause__
                self.out(f"error: the call failed: {type(err).__name__}: {err}")
                for note in getattr(err, "__notes__", ()):
                    self.out(f"  {note}")
            except (ValueError, KeyError, RuntimeError, TypeError) as err:  # a bad command
                self.out(f"error: {err.args[0] if err.args else err}")
        self.dbg.abandon()

    def command(self, name, arg=""):
        dbg = self.dbg
        moves = {"s": dbg.step, "n": dbg.step_over, "c": dbg.continue_, "f": dbg.finish}
        if name in moves:
            alive = dbg.call is not None and not dbg.call.done
            try:
                stop = moves[name]()
            except Exception as err:
                if alive and dbg.call.done:
                    raise CallFailed() from err
                raise
            self.show(stop)
        elif name == "b":
            self.out(f"breakpoint {self.breakpoint(arg.strip())}")
        elif name == "p":
            self.out(format_value(describe(dbg.register(_register_ref(arg.strip())))))
        elif name == "regs":
            self.out(dbg.format_registers())
        elif name == "where":
            for depth, (func, position, binding) in enumerate(dbg.where()):
                self.out(f"#{depth} {func}@{position}" + (f" ({binding})" if binding else ""))
        elif name == "list":
            self.out(dbg.listing())
        elif name == "watch":
            dbg.watch_nonfinite(arg.strip() != "off")
            self.out(f"non-finite watch {'off' if arg.strip() == 'off' else 'on'}")
        elif name in ("h", "help"):
            self.out(HELP)
        else:
            raise ValueError(f"unknown command {name!r} (h for help)")

    def breakpoint(self, what):
        dbg = self.dbg
        if not what:
            raise ValueError("b expects a binding, a kernel, N or FUNC@N")
        if "@" in what or what.isdigit():
            func, _, position = what.rpartition("@")
            if not position.isdigit():
                raise ValueError(f"b expects FUNC@N with N a number, got {what!r}")
            if not func:
                stack = dbg.where() if dbg.call is not None else []
                func = stack[-1][0] if stack else "main"
            return dbg.break_at(pc=int(position), function=func)
        try:
            return dbg.break_at(binding=what)
        except ValueError:
            try:
                return dbg.break_at(kernel=what)
            except ValueError:
                raise ValueError(f"no binding or kernel named {what!r}") from None


def _register_ref(text):
    if not text:
        raise ValueError("p expects a register: %N, N or a Relax variable name")
    if text.startswith("%"):
        text = text[1:]
    return int(text) if text.isdigit() else text


def debug_session(vm, func_name, inputs, lines, breaks=(), watch=False, out=print):
    """Starts ``func_name`` on ``inputs`` under a debugger of ``vm``, stopped at its first
    instruction or (with ``breaks``) at the first breakpoint, then runs the command loop."""
    shell = DebugShell(vm.debug(), out)
    for what in breaks:
        out(f"breakpoint {shell.breakpoint(what)}")
    shell.dbg.watch_nonfinite(watch)
    stop = shell.dbg.start(func_name, *inputs)
    if breaks or watch:
        stop = shell.dbg.continue_()
    shell.show(stop)
    shell.run(lines)
