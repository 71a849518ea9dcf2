"""The native engine: the interpreter loop in C (native/src/vm_*.c), built from an
Executable and the function pool the VirtualMachine resolved.

Each pool entry becomes a C callee: VM functions push a frame, the builtins
with a C implementation (``NATIVE_BUILTINS``, when the registry still holds
rvm's own Python version) run in C, C packed functions (compiled kernels
included) are called through their function pointers, and anything else is a
Python callable. The C builtins defer to their Python versions on arguments
they do not handle and on every failed check, so both engines raise the same
errors.

A VM function used as a value is its VMClosure (boxed); ``make_closure`` is
the Python builtin, and ``invoke_closure`` on a closure of the same VM pushes
a frame like a direct call.
"""
from rvm.bytecode.function import FuncKind
from rvm.bytecode.opcodes import encode_instruction
from rvm.runtime._ffi import _bridge
from rvm.runtime.packed_func import PackedFunc
from rvm.vm.builtin_registry import BUILTINS

KIND_VM, KIND_BUILTIN, KIND_C, KIND_PYTHON = 0, 1, 2, 3
NATIVE_BUILTINS = frozenset(
    f"vm.builtin.{name}" for name in (
        "alloc_storage", "alloc_tensor", "null_value", "copy", "check_tensor_info",
        "check_shape_info", "check_tuple_info", "match_shape", "make_shape", "alloc_shape_heap",
        "make_tuple", "tuple_getitem", "read_if_cond", "shape_of", "reshape",
        "invoke_closure"))


def native_available():
    """Whether the native runtime was built with the engine.

    >>> native_available()
    True
    """
    return hasattr(_bridge, "NativeVM")


def _pool_entry(info, callee):
    if info.kind == FuncKind.VM:
        return (KIND_VM, info.name, callee, None)   # callee: its VMClosure
    if info.name in NATIVE_BUILTINS and callee is BUILTINS.get(info.name):
        return (KIND_BUILTIN, info.name, callee, PackedFunc(callee))
    if isinstance(callee, PackedFunc) and not callee.is_python:
        return (KIND_C, info.name, callee, callee)
    packed = callee if isinstance(callee, PackedFunc) else PackedFunc(callee)
    return (KIND_PYTHON, info.name, callee, packed)


def build_native_engine(ex, pool, vm, naive, num_devices, helpers):
    """The NativeVM of ``ex``; ``helpers`` are the Python callbacks it needs:
    (describe, truth, to_runtime, check_args, fallback, numpy_types, closure type)."""
    functions, entries = [], []
    for index, info in enumerate(ex.func_table):
        entries.append(_pool_entry(info, pool[index]))
        if info.kind == FuncKind.VM:
            words = [w for instr in ex.instructions[info.start:info.end]
                     for w in encode_instruction(instr)]
            functions.append((info.name, 1, info.num_args, info.num_regs, words))
        else:
            functions.append((info.name, 0, 0, 0, None))
    return _bridge.NativeVM(vm, functions, list(ex.constants), entries, int(naive),
                            num_devices, helpers)
