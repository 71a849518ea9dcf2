"""The stepping loop: one call of a VM function run one instruction at a time.

It executes the linked form (rvm.vm.link) exactly as the python engine's
interpreter does (rvm.vm.interpreter: same callees, same VM state, same
closure frames, step limit, time limit and call depth, same error notes, an
instrument set on the VM sees its calls), but
keeps its frames as objects the debugger can read and can stop between any
two instructions. It is what ``Debugger`` and a traced profile run on **both**
engines: the native engine's C loop is not involved in a stepped call (its
callees, C kernels and builtins, are the same function pointers either way),
so it pays nothing when no debugger is attached.

A stepped call holds no run state of the VM between two ``advance`` calls:
``running`` enters the VM's run bookkeeping (one thread, kernel context) only
while instructions execute, so a stopped call is abandoned by dropping it.
"""
import threading
import time
from contextlib import contextmanager

from rvm.bytecode.contract import (
    CALL, GOTO, MAX_CALL_DEPTH, RET, STEP_LIMIT_MESSAGE, CalleeKind, LinkedArg,
)
from rvm.bytecode.disasm import describe_position
from rvm.bytecode.function import FuncKind
from rvm.runtime._ffi import _bridge
from rvm.vm.closure import VMClosure
from rvm.vm.interpreter import branch_taken, observed_call

_CALL, _RET, _GOTO = CALL.code, RET.code, GOTO.code
# callees whose result is storage not yet written: no output of theirs has a value yet
UNWRITTEN = frozenset({"vm.builtin.alloc_storage", "vm.builtin.alloc_tensor"})
_REG, _VM, _CLOSURE = LinkedArg.REG, CalleeKind.VM, CalleeKind.CLOSURE


class Frame:
    """One VM function's activation: its registers, the Relax variable each holds, the
    next instruction (absolute ``pc``), and the caller's destination register."""

    __slots__ = ("fidx", "pc", "regs", "names", "dst", "started", "fresh")

    def __init__(self, fidx, info, args, dst):
        self.fidx = fidx
        self.pc = info.start
        self.regs = list(args) + [None] * (info.num_regs - info.num_args)
        names = list(info.param_names or ())[:info.num_args]
        self.names = names + [None] * (info.num_regs - len(names))
        self.dst = dst
        self.started = time.perf_counter()
        self.fresh = set()  # registers holding an allocation no call has written yet


class Executed:
    """What one executed instruction did: ``pc`` and ``frame`` it ran in, the callee's
    ``argv``, ``result`` and ``outputs`` (the values it wrote: its result, or the fresh
    allocations it filled) for a call that is not a VM call (else None) with when it
    ``started`` and how many ``seconds`` it took, and whether it entered (``entered``) or
    returned from (``returned``) a VM frame."""

    __slots__ = ("pc", "frame", "callee", "argv", "result", "outputs", "entered", "returned",
                 "started", "seconds")

    def __init__(self, pc, frame):
        self.pc, self.frame = pc, frame
        self.callee = self.argv = self.result = None
        self.outputs = ()
        self.entered = self.returned = False
        self.started = self.seconds = 0.0


class SteppedCall:
    """A call of VM function ``fidx`` of ``vm`` on checked ``args``, advanced by ``advance``.

    ``frames`` is the VM stack (the entry frame first); ``done`` and ``result`` tell
    whether and with what the entry function returned.
    """

    def __init__(self, vm, fidx, args):
        self.vm = vm
        info = vm.executable.func_table[fidx]
        self.frames = [Frame(fidx, info, args, -1)]
        self.done = False
        self.result = None
        self._steps = vm.step_limit or -1

    @contextmanager
    def running(self):
        """The VM's run bookkeeping around executing instructions (as interpreter.run)."""
        vm = self.vm
        thread = threading.get_ident()
        if vm.active_runs and vm.running_thread != thread:
            raise RuntimeError("VirtualMachine: called from two threads at once; a "
                               "VirtualMachine is used by one thread at a time (make one "
                               "per thread)")
        vm.running_thread = thread
        vm.active_runs += 1
        token = _bridge.kernel_context_enter(vm.state)
        try:
            yield
        finally:
            _bridge.kernel_context_exit(vm.state, token)
            vm.active_runs -= 1

    def _count_step(self):
        vm = self.vm
        if self._steps == 0:
            raise RuntimeError(STEP_LIMIT_MESSAGE.replace("%lld", str(vm.step_limit)))
        self._steps -= 1
        if vm.time_limit:
            _bridge.kernel_context_check(vm.state)

    def _call(self, frame, done, func, callee, argv, dst, arg_refs):
        """A call that is not a VM call: the result to ``dst``, the written registers named
        after the binding, ``done.outputs`` the values the call wrote."""
        vm, pc = self.vm, done.pc
        info = vm.executable.func_table[callee]
        outs = []  # registers a destination-passing call writes
        if dst < 0 and arg_refs and _names_output(vm.executable, info, pc):
            regs = [i for k, i in arg_refs if k == _REG]
            outs = [i for i in regs if i in frame.fresh]
            if not outs and arg_refs[-1][0] == _REG:  # the convention: the output is last
                outs = [arg_refs[-1][1]]
        start = time.perf_counter()
        if vm.instrument is not None or vm.profile_samples is not None:
            result = observed_call(vm, pc, func, info.name, argv)
        else:
            result = func(*argv)
        done.started, done.seconds = start, time.perf_counter() - start
        done.callee, done.argv, done.result = callee, argv, result
        binding = _binding(vm.executable, pc)
        for i in outs:
            frame.names[i] = binding
            frame.fresh.discard(i)
        done.outputs = [frame.regs[i] for i in outs]
        if dst >= 0:
            frame.regs[dst] = result
            frame.names[dst] = binding
            if info.name in UNWRITTEN:
                frame.fresh.add(dst)
            else:
                frame.fresh.discard(dst)
                done.outputs.append(result)
        frame.pc = pc + 1

    def advance(self):
        """Executes the next instruction (inside ``running``); returns its ``Executed``.
        An error gets the python engine's position note and ends the call."""
        frame = self.frames[-1]
        try:
            return self._execute(frame)
        except Exception as err:
            if hasattr(err, "add_note"):
                err.add_note(describe_position(self.vm.executable, frame.fidx, frame.pc,
                                               len(self.frames) - 1))
            self.frames.clear()
            self.done = True
            raise

    def _execute(self, frame):
        vm, linked = self.vm, self.vm.linked
        table = vm.executable.func_table
        pc = frame.pc
        op, dst, reg, callee, target, nargs, first = linked.code[pc]
        regs = frame.regs
        done = Executed(pc, frame)
        if op == _CALL:
            argv = [regs[i] if k == _REG else linked.values[i]
                    for k, i in linked.args[first:first + nargs]]
            kind, func = linked.kinds[callee], linked.callees[callee]
            if kind == _CLOSURE and type(argv[1]) is VMClosure and argv[1].vm is vm:
                callee = argv[1].func_index
                argv = list(vm.check_args(callee, [*argv[1].saved_args, *argv[2:]]))
                kind = _VM
            if kind == _VM:
                self._count_step()
                if len(self.frames) > MAX_CALL_DEPTH:
                    raise RecursionError(f"VM call depth exceeded {MAX_CALL_DEPTH}")
                self.frames.append(Frame(callee, table[callee], argv, dst))
                done.entered = True
                return done
            self._call(frame, done, func, callee, argv, dst, linked.args[first:first + nargs])
        elif op == _RET:
            result = regs[reg]
            self.frames.pop()
            done.returned, done.result = True, result
            if not self.frames:
                self.done, self.result = True, result
                return done
            caller = self.frames[-1]
            if frame.dst >= 0:
                caller.regs[frame.dst] = result
                caller.names[frame.dst] = _binding(vm.executable, caller.pc)
            caller.pc += 1
        elif op == _GOTO:
            if target <= pc:
                self._count_step()
            frame.pc = target
        elif branch_taken(regs[reg]):
            frame.pc = pc + 1
        else:
            if target <= pc:
                self._count_step()
            frame.pc = target
        return done


def _names_output(ex, info, pc):
    """Whether a call with no destination register writes arguments as the value of its
    binding (the fresh allocations it is passed, else its last argument): a kernel, or a
    destination-passing call of a named binding."""
    if info.kind == FuncKind.KERNEL:
        return True
    return _binding(ex, pc) not in (None, "_", "return") and not info.name.startswith(
        "vm.builtin.")


def _binding(ex, pc):
    source = ex.source_map.get(pc)
    return source[1] if source else None
