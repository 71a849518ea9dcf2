"""The python engine: the reference interpreter over the linked form (rvm.vm.link).

It defines what the native engine (native/src/vm_interp.c) must do, on the same
rows: VM-to-VM calls push a frame on a flat stack (no Python recursion), a
closure of the running VM gets a frame too, every other callee is called with
its arguments gathered from registers and linked values. When an instrument
or a profile is set, every call site that is not a VM-to-VM call (closures
included) goes through ``observed_call``.
"""
import threading
import time

import numpy as np

from rvm.bytecode.contract import (
    CALL, GOTO, MAX_CALL_DEPTH, RET, STEP_LIMIT_MESSAGE, CalleeKind, LinkedArg,
)
from rvm.bytecode.disasm import describe_position
from rvm.runtime._ffi import _bridge
from rvm.vm.closure import VMClosure
from rvm.vm.profiler import SKIP_RUN

_CALL, _RET, _GOTO = CALL.code, RET.code, GOTO.code
_REG, _VM, _CLOSURE = LinkedArg.REG, CalleeKind.VM, CalleeKind.CLOSURE


def branch_taken(cond):
    """The truth of an IF condition: a bool or an int; anything else is a TypeError."""
    if isinstance(cond, (bool, int, np.integer, np.bool_)):
        return bool(cond)
    raise TypeError(f"IF expects a bool or int condition (use vm.builtin.read_if_cond for "
                    f"tensors), got {type(cond).__name__}")


def observed_call(vm, pc, func, name, argv):
    """A call under ``vm``'s instrument and profile (both engines' observed call sites)."""
    instrument = vm.instrument
    if instrument is not None and instrument(func, name, True, None, *argv) == SKIP_RUN:
        return None
    start = time.perf_counter()
    result = func(*argv)
    if vm.profile_samples is not None:
        site = vm.profile_samples.setdefault(pc, [0, 0.0])
        site[0] += 1
        site[1] += time.perf_counter() - start
    if vm.instrument is not None:  # it may have removed itself
        vm.instrument(func, name, False, result, *argv)
    return result


def _over_step_limit(limit):
    return RuntimeError(STEP_LIMIT_MESSAGE.replace("%lld", str(limit)))


def run(vm, fidx, args):
    """Runs VM function ``fidx`` of ``vm`` on checked ``args``; returns its result."""
    thread = threading.get_ident()
    if vm.active_runs and vm.running_thread != thread:
        raise RuntimeError("VirtualMachine: called from two threads at once; a VirtualMachine "
                           "is used by one thread at a time (make one per thread)")
    vm.running_thread = thread
    vm.active_runs += 1
    token = _bridge.kernel_context_enter(vm.state)  # the budget and limits of its kernels
    try:
        return _run(vm, fidx, args)
    finally:
        _bridge.kernel_context_exit(vm.state, token)
        vm.active_runs -= 1


def _run(vm, fidx, args):
    linked, ex = vm.linked, vm.executable
    code, arg_table, values = linked.code, linked.args, linked.values
    callees, kinds, table = linked.callees, linked.kinds, ex.func_table
    observed = vm.instrument is not None or vm.profile_samples is not None
    info = table[fidx]
    regs = [*args] + [None] * (info.num_regs - info.num_args)
    stack, pc = [], info.start
    # steps left before the step limit (VM calls and backward jumps); -1: no limit
    steps = vm.step_limit or -1
    # at each step: the error of a run cancelled by its time_limit (as the native engine)
    check = _bridge.kernel_context_check if vm.time_limit else None
    state = vm.state
    try:
        while True:
            op, dst, reg, callee, target, nargs, first = code[pc]
            if op == _CALL:
                argv = []  # (a loop: a comprehension costs a function call per CALL)
                for k, i in arg_table[first:first + nargs]:
                    argv.append(regs[i] if k == _REG else values[i])
                kind, func = kinds[callee], callees[callee]
                if kind == _CLOSURE and not observed and type(argv[1]) is VMClosure \
                        and argv[1].vm is vm:
                    callee = argv[1].func_index
                    argv = list(vm.check_args(callee, [*argv[1].saved_args, *argv[2:]]))
                    kind = _VM
                if kind == _VM:
                    if steps == 0:
                        raise _over_step_limit(vm.step_limit)
                    steps -= 1
                    if check is not None:
                        check(state)
                    if len(stack) >= MAX_CALL_DEPTH:
                        raise RecursionError(f"VM call depth exceeded {MAX_CALL_DEPTH}")
                    stack.append((pc, regs, fidx, dst))
                    fidx, info = callee, table[callee]
                    regs = argv + [None] * (info.num_regs - info.num_args)
                    pc = info.start
                    continue
                if observed:
                    result = observed_call(vm, pc, func, table[callee].name, argv)
                else:
                    result = func(*argv)
                if dst >= 0:
                    regs[dst] = result
                pc += 1
            elif op == _RET:
                result = regs[reg]
                if not stack:
                    return result
                pc, regs, fidx, dst = stack.pop()
                if dst >= 0:
                    regs[dst] = result
                pc += 1
            elif op == _GOTO:
                if target <= pc:
                    if steps == 0:
                        raise _over_step_limit(vm.step_limit)
                    steps -= 1
                    if check is not None:
                        check(state)
                pc = target
            elif branch_taken(regs[reg]):
                pc += 1
            else:
                if target <= pc:
                    if steps == 0:
                        raise _over_step_limit(vm.step_limit)
                    steps -= 1
                    if check is not None:
                        check(state)
                pc = target
    except Exception as err:
        if hasattr(err, "add_note"):
            err.add_note(describe_position(ex, fidx, pc, len(stack)))
        raise
