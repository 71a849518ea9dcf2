"""The native engine: the interpreter loop in C (native/src/vm_*.c) over the linked form.

``build_native_engine`` hands the C engine the linked rows (flat int32 arrays
laid out as the contract's C structs), the linked values, one entry per
function-table entry (name, CalleeKind, code range, counts, callee) and the
``EngineHooks``: the few things the C loop asks Python for.
"""
from typing import Callable, NamedTuple

from rvm.bytecode.disasm import describe_position
from rvm.runtime._ffi import _bridge
from rvm.vm.closure import VMClosure
from rvm.vm.interpreter import branch_taken


class EngineHooks(NamedTuple):
    """What the native engine calls back into Python for (read by name in C)."""

    vm: object                 # the VirtualMachine: the VM state argument of Python callees
    describe: Callable         # (func index, pc, depth) -> the position note of an error
    truth: Callable            # IF on a value that is not a bool or an int
    check_args: Callable       # (func index, args) -> args converted (numpy), or the count error
    closure_type: type         # VMClosure: what invoke_closure runs in a new frame


def native_available():
    """Whether the native runtime was built with the engine.

    >>> native_available()
    True
    """
    return hasattr(_bridge, "NativeVM")


def build_native_engine(vm, release_gil, step_limit=0):
    """The NativeVM running the linked form of VirtualMachine ``vm``; ``step_limit``: steps
    per run (0: no limit)."""
    ex, linked = vm.executable, vm.linked
    hooks = EngineHooks(vm, lambda fidx, pc, depth: describe_position(ex, fidx, pc, depth),
                        branch_taken, vm.check_args, VMClosure)
    functions = [(info.name, int(kind), info.start, info.end, info.num_args, info.num_regs,
                  callee)
                 for info, kind, callee in zip(ex.func_table, linked.kinds, linked.callees)]
    code, args = linked.pack()
    return _bridge.NativeVM(hooks, functions, code, args, list(linked.values), vm.state,
                            bool(release_gil), int(step_limit))
