"""Debugger: break, step and inspect a VM call, on either engine.

What runs where: a debugged call runs in the stepping loop (rvm.vm.stepper),
a Python loop over the VM's linked form that executes instructions as the
python engine does, on both engines; its callees (C kernels, C and Python
builtins) are the VM's own, called on the VM's storage and state, so results
and registers are those of a plain call. Calls made without a debugger never
reach this module: the native engine's C loop is unchanged and pays nothing.

Breakpoints stop *before* an instruction: by position in a VM function
(``pc=``, ``function=``), by Relax binding (its first instruction), by kernel
(any call of it, directly or as a function argument), each optionally
conditional (``when=lambda regs: ...`` on the frame's registers by index and by
Relax variable name, tensors as numpy arrays). ``watch_nonfinite()`` stops
*after* the first call whose output holds a NaN or Inf: its result, or for a
destination-passing call (a kernel) the fresh allocations it was passed (else
its last argument); an allocation itself is no output (its storage holds
whatever the pool held).

>>> # dbg = vm.debug(); dbg.break_at(binding="lv1"); stop = dbg.start("main", x)
"""
from typing import NamedTuple, Optional

from rvm.bytecode.contract import CALL, ArgKind
from rvm.bytecode.disasm import format_instruction
from rvm.bytecode.function import FuncKind
from rvm.runtime.ndarray import NDArray
from rvm.vm.debug_values import describe, format_value, nonfinite_count
from rvm.vm.stepper import SteppedCall


class Stop(NamedTuple):
    """Why and where a debugged call stopped: ``reason`` is one of start, step,
    breakpoint, finish (the frame returned), nonfinite, done (the call returned);
    ``position`` is relative to ``function``; ``detail`` has the reason's data."""

    reason: str
    function: str
    position: int
    binding: Optional[str]
    kernel: Optional[str]
    detail: dict

    def __str__(self):
        where = f"{self.function}@{self.position}"
        if self.binding:
            where += f" ({self.binding})"
        text = f"[{self.reason}] {where}"
        if self.kernel:
            text += f" kernel {self.kernel}"
        return text


class Breakpoint(NamedTuple):
    number: int
    pcs: frozenset
    when: Optional[object]
    text: str


class Debugger:
    """Stops, steps and inspects calls of ``vm`` (a VirtualMachine, either engine)."""

    def __init__(self, vm):
        if getattr(vm, "linked", None) is None or getattr(vm, "executable", None) is None:
            raise TypeError(f"Debugger expects a VirtualMachine, got {type(vm).__name__}")
        self.vm = vm
        self.ex = vm.executable
        self.call = None
        self.last = None
        self._breakpoints = {}
        self._watch = False
        self._names = [f.name for f in self.ex.func_table]

    # -- breakpoints -----------------------------------------------------------------------

    def break_at(self, pc=None, function=None, binding=None, kernel=None, when=None):
        """Adds a breakpoint (one of ``pc`` with ``function`` (default main), ``binding``,
        ``kernel``); returns its number. ValueError if it matches no instruction."""
        given = [k for k, v in (("pc", pc), ("binding", binding), ("kernel", kernel))
                 if v is not None]
        if len(given) != 1:
            raise ValueError(f"break_at expects exactly one of pc, binding, kernel; got "
                             f"{', '.join(given) or 'none'}")
        if when is not None and not callable(when):
            raise TypeError(f"break_at: when must be callable, got {type(when).__name__}")
        if pc is not None:
            pcs, text = self._position_pcs(pc, function or "main")
        elif binding is not None:
            pcs, text = self._binding_pcs(str(binding)), f"binding {binding}"
        else:
            pcs, text = self._kernel_pcs(str(kernel)), f"kernel {kernel}"
        if not pcs:
            raise ValueError(f"break_at: no instruction for {text}")
        number = len(self._breakpoints) + 1
        while number in self._breakpoints:
            number += 1
        self._breakpoints[number] = Breakpoint(number, frozenset(pcs), when, text)
        return number

    def delete(self, number):
        """Removes breakpoint ``number``."""
        if self._breakpoints.pop(number, None) is None:
            raise ValueError(f"no breakpoint {number}; have {sorted(self._breakpoints)}")

    def breakpoints(self):
        """{number: description} of the breakpoints set."""
        return {n: b.text for n, b in self._breakpoints.items()}

    def watch_nonfinite(self, on=True):
        """Stops after the first call whose output holds a NaN or Inf (``on=False``: no)."""
        self._watch = bool(on)

    def _position_pcs(self, position, function):
        index = self.ex.func_map.get(function)
        if index is None or self.ex.func_table[index].kind != FuncKind.VM:
            raise ValueError(f"break_at: no VM function '{function}'; available: "
                             f"{', '.join(self.ex.vm_function_names())}")
        info = self.ex.func_table[index]
        if not isinstance(position, int) or not 0 <= position < info.end - info.start:
            raise ValueError(f"break_at: {function} has instructions 0..."
                             f"{info.end - info.start - 1}, got {position!r}")
        return {info.start + position}, f"{function}@{position}"

    def _binding_pcs(self, name):
        pcs, smap = set(), self.ex.source_map
        for pc, (_, binding) in smap.items():
            previous = smap.get(pc - 1)
            if binding == name and (previous is None or previous[1] != name
                                    or self.ex.function_at(pc - 1) != self.ex.function_at(pc)):
                pcs.add(pc)
        return pcs

    def _kernel_pcs(self, name):
        pcs = set()
        for pc, instr in enumerate(self.ex.instructions):
            if instr.op is CALL and name in self._called_names(instr):
                pcs.add(pc)
        return pcs

    def _called_names(self, instr):
        refs = [instr.field("func")] + [a.value for a in instr.field("args")
                                        if a.kind == ArgKind.FUNC]
        return [self._names[r] for r in refs if 0 <= r < len(self._names)]

    def _kernel_of(self, pc):
        """The kernel an instruction calls (directly or as an argument), else None."""
        instr = self.ex.instructions[pc]
        if instr.op is not CALL:
            return None
        table = self.ex.func_table
        for name in self._called_names(instr):
            if table[self.ex.func_map[name]].kind == FuncKind.KERNEL:
                return name
        return None

    # -- running ---------------------------------------------------------------------------

    def start(self, func_name="main", *args, **kwargs):
        """Starts a call of ``func_name`` stopped before its first instruction (a call
        already stopped is abandoned); returns the Stop."""
        index = self.vm._func_index(func_name)
        checked = self.vm.check_args(index, args, kwargs)
        self.abandon()
        self.call = SteppedCall(self.vm, index, checked)
        return self._stop("start", self.call.frames[-1].pc)

    def run(self, func_name="main", *args, **kwargs):
        """``start`` then ``continue_``."""
        self.start(func_name, *args, **kwargs)
        return self.continue_()

    def abandon(self):
        """Drops the stopped call (its registers and frames: their storage is freed)."""
        self.call = None
        self.last = None

    @property
    def result(self):
        """The value the call returned (once a Stop of reason 'done' was reached)."""
        if self.call is None or not self.call.done:
            raise RuntimeError("the debugged call has not returned")
        return self.call.result

    def step(self):
        """Executes one instruction (into a called VM function); returns the Stop."""
        return self._resume(lambda depth: True, "step")

    def step_over(self):
        """Executes one instruction; a call of a VM function runs to its return."""
        base = self._depth()
        return self._resume(lambda depth: depth <= base, "step")

    def finish(self):
        """Runs until the current VM function returns to its caller."""
        base = self._depth()
        return self._resume(lambda depth: depth < base, "finish")

    def continue_(self):
        """Runs until a breakpoint, the non-finite watch, or the call's return."""
        return self._resume(lambda depth: False, "step")

    def _depth(self):
        self._require_stopped()
        return len(self.call.frames)

    def _require_stopped(self):
        if self.call is None:
            raise RuntimeError("no debugged call: call start(func_name, *args) first")
        if self.call.done:
            raise RuntimeError("the debugged call has returned; start a new one")

    def _resume(self, stop_after, reason):
        self._require_stopped()
        call = self.call
        with call.running():
            first = True
            while True:
                frame = call.frames[-1]
                if not first and self._breakpoint_hit(frame):
                    return self._stop("breakpoint", frame.pc)
                first = False
                done = call.advance()
                if call.done:
                    return self._stop("done", done.pc, frame=done.frame,
                                      detail={"result": describe(call.result)})
                if self._watch and done.callee is not None:
                    found = self._nonfinite(done)
                    if found is not None:
                        return self._stop("nonfinite", done.pc, frame=done.frame,
                                          detail=found)
                if stop_after(len(call.frames)):
                    return self._stop(reason, call.frames[-1].pc)

    def _breakpoint_hit(self, frame):
        for bp in self._breakpoints.values():
            if frame.pc in bp.pcs and (bp.when is None or bp.when(self._view(frame))):
                return True
        return False

    def _view(self, frame):
        view = {}
        for i, value in enumerate(frame.regs):
            if value is None:
                continue
            value = value.numpy() if isinstance(value, NDArray) else value
            view[i] = value
            if frame.names[i]:
                view[frame.names[i]] = value
        return view

    def _nonfinite(self, done):
        if not any(nonfinite_count(o) for o in done.outputs):
            return None
        written = [id(o) for o in done.outputs]
        inputs = [a for a in done.argv
                  if a is not self.vm.state and a is not self.vm and id(a) not in written]
        return {"outputs": [describe(o) for o in done.outputs],
                "inputs": [describe(a) for a in inputs],
                "callee": self._names[done.callee]}

    def _stop(self, reason, pc, frame=None, detail=None):
        frame = frame or self.call.frames[-1]
        info = self.ex.func_table[frame.fidx]
        source = self.ex.source_map.get(pc)
        self.last = Stop(reason, info.name, pc - info.start, source[1] if source else None,
                         self._kernel_of(pc) if info.start <= pc < info.end else None,
                         detail or {})
        return self.last

    # -- inspecting ------------------------------------------------------------------------

    def registers(self, frame=-1):
        """The live registers of a frame (default the innermost): a list of dicts with
        reg, var (the Relax variable, or None) and value (see debug_values.describe)."""
        self._require_call()
        current = self.call.frames[frame]
        return [{"reg": i, "var": current.names[i], "value": describe(v)}
                for i, v in enumerate(current.regs) if v is not None]

    def register(self, ref):
        """The value of one register of the innermost frame, by index or Relax variable."""
        self._require_call()
        current = self.call.frames[-1]
        for i, value in enumerate(current.regs):
            if value is not None and (ref == i or ref == current.names[i] or ref == f"%{i}"):
                return value
        raise KeyError(f"no live register {ref!r} in {self.ex.func_table[current.fidx].name}")

    def _require_call(self):
        if self.call is None or not self.call.frames:
            raise RuntimeError("no stopped call to inspect")

    def where(self):
        """The VM stack, outermost first: (function, position, binding) per frame (empty
        once the call returned)."""
        if self.call is None:
            raise RuntimeError("no debugged call: call start(func_name, *args) first")
        out = []
        for frame in self.call.frames:
            info = self.ex.func_table[frame.fidx]
            source = self.ex.source_map.get(frame.pc)
            out.append((info.name, frame.pc - info.start, source[1] if source else None))
        return out

    def listing(self, context=3):
        """The bytecode around the current instruction, the Relax binding beside each."""
        self._require_call()
        frame = self.call.frames[-1]
        info = self.ex.func_table[frame.fidx]
        lines = [f"@{info.name}"]
        for pc in range(max(info.start, frame.pc - context),
                        min(info.end, frame.pc + context + 1)):
            text = format_instruction(self.ex.instructions[pc], pc, info.start, self._names)
            source = self.ex.source_map.get(pc)
            mark = "=>" if pc == frame.pc else "  "
            note = f"  ; {source[1]}" if source else ""
            lines.append(f"{mark}{pc - info.start:>4}: {text}{note}")
        return "\n".join(lines)

    def format_registers(self, frame=-1):
        """``registers()`` as text, one register a line."""
        return "\n".join(f"%{r['reg']:<3} {r['var'] or '':<16} {format_value(r['value'])}"
                         for r in self.registers(frame))
