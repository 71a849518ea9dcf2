"""VirtualMachine: runs a verified Executable on one of two engines.

At construction every function-table entry is resolved once into a function
pool (VM functions become closures; others are looked up in the executable's
kernel libraries, then its imported modules, then the global registry).

- the **python** engine pre-decodes each VM function into tuples its loop
  reads directly; VM-to-VM calls push a frame on a flat stack, so deep
  recursion costs no Python recursion;
- the **native** engine (rvm.vm.native) runs the same bytecode in C. It is
  used when ``engine="native"``, or by default (``DEFAULT_ENGINE``) when it
  is available. Profiling and instruments always run on the python engine.
"""
import numpy as np

from rvm.bytecode.executable import Executable
from rvm.bytecode.function import FuncKind
from rvm.bytecode.opcodes import ArgKind
from rvm.runtime.container import Array
from rvm.runtime.device import Device, cpu
from rvm.runtime.module import Module
from rvm.runtime.ndarray import array, from_dlpack
from rvm.runtime.packed_func import PackedFunc, get_global_func
from rvm.runtime.profiling import time_evaluator as _time_evaluator
from rvm.vm import builtins_memory, builtins_shape  # noqa: F401  (register the builtins)
from rvm.vm.allocator import make_allocator
from rvm.vm.builtins_misc import invoke_closure as _invoke_closure_builtin
from rvm.vm.closure import VMClosure
from rvm.vm.decode import (
    OP_CALL1, OP_CALL2, OP_CALL3, OP_CALLN, OP_GOTO, OP_IF, OP_INVOKE, OP_RET,
    OP_VMCALL, decode_function, describe_position,
)
from rvm.vm.native import build_native_engine, native_available
from rvm.vm.profiler import ProfileReport, instrument_wrapper, timing_wrapper

MAX_CALL_DEPTH = 100_000
ENGINES = ("native", "python")
DEFAULT_ENGINE = "native"  # engine=None: this one when it can run the executable
_CONVERTED = (np.ndarray, np.generic)  # argument types converted at entry


def _truth(value):
    """The truth of a branch condition that is not a plain bool."""
    if isinstance(value, (int, np.integer, np.bool_)):
        return bool(value)
    raise TypeError(f"IF expects a bool or int condition (use vm.builtin.read_if_cond for "
                    f"tensors), got {type(value).__name__}")


def _to_runtime(value):
    """Entry conversion: numpy arrays become NDArrays, numpy scalars Python scalars."""
    if isinstance(value, np.ndarray):
        if value.flags.c_contiguous and value.flags.writeable and value.dtype != object:
            return from_dlpack(value)
        return array(value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def _by_name(info, args, kwargs):
    """``args`` followed by ``kwargs`` placed by the parameter names of ``info``."""
    names = list(info.param_names)
    merged = list(args) + [_MISSING] * (len(names) - len(args))
    for name, value in kwargs.items():
        if name not in names:
            raise TypeError(f"{info.name}() has no parameter '{name}'; its parameters are "
                            f"({', '.join(names)})")
        k = names.index(name)
        if k < len(args):
            raise TypeError(f"{info.name}() got parameter '{name}' twice (positionally and "
                            "by name)")
        merged[k] = value
    missing = [n for n, v in zip(names, merged) if v is _MISSING]
    if missing:
        raise TypeError(f"{info.name}() is missing argument(s) {', '.join(missing)}")
    return merged


_MISSING = object()


class VirtualMachine:
    """Runs the VM functions of an Executable.

    ``engine`` is "native" or "python" (None: ``DEFAULT_ENGINE``); ``memory_cfg`` is
    "pooled" or "naive"; ``release_gil`` lets the native engine run C callees (kernels)
    without the GIL, so other Python threads run meanwhile.

    >>> from rvm.bytecode.builder import ExecBuilder
    >>> ib = ExecBuilder()
    >>> with ib.function("ident", num_inputs=1):
    ...     _ = ib.emit_ret(ib.r(0))
    >>> VirtualMachine(ib.get(), cpu())["ident"](7)
    7
    """

    def __init__(self, rt_mod, device=None, memory_cfg="pooled", engine=None,
                 release_gil=False):
        if not isinstance(rt_mod, Executable):
            raise TypeError(f"VirtualMachine expects an Executable, got {type(rt_mod).__name__}")
        devices = [cpu(0)] if device is None else (
            list(device) if isinstance(device, (list, tuple)) else [device])
        for dev in devices:
            if not isinstance(dev, Device) or dev.device_type != Device.CPU:
                raise ValueError(f"VirtualMachine: device {dev!r} is not supported; "
                                 f"rvm runs on cpu")
        self.executable = rt_mod
        self.devices = devices
        self.allocators = [make_allocator(memory_cfg, dev) for dev in devices]
        self._pool = self._resolve_functions()
        self._plain = self._funcs = None   # the python engine's code, decoded when needed
        self._inputs = {}
        self._outputs = {}
        self._saved = {}
        self._entries = {}
        self._instrument = None
        self._native = None
        self.engine = self._choose_engine(engine, memory_cfg)
        if self._native is not None:
            self._native.release_gil = bool(release_gil)
        if self._native is None:
            self._python_code()
        self.module = VMModule(self)

    # -- construction ----------------------------------------------------------------------

    def _choose_engine(self, engine, memory_cfg):
        """Builds the native engine when asked for (or by default) if the runtime has it;
        returns the name of the engine in use."""
        explicit = engine is not None
        engine = DEFAULT_ENGINE if engine is None else engine
        if engine not in ENGINES:
            raise ValueError(f"VirtualMachine: engine must be one of {ENGINES}, got {engine!r}")
        if engine == "python":
            return "python"
        if not native_available():
            if explicit:
                raise ValueError("VirtualMachine: engine='native' is not available (the native "
                                 "runtime was built without it); use engine='python'")
            return "python"
        ex = self.executable
        helpers = (lambda fidx, pc, depth: describe_position(ex, fidx, pc, depth),
                   _truth, _to_runtime, self._check_args,
                   lambda index, args: self._interpret(index, self._check_args(index, args)),
                   _CONVERTED, VMClosure)
        self._native = build_native_engine(ex, self._pool, self, memory_cfg == "naive",
                                           len(self.devices), helpers)
        return "native"

    def _resolve_one(self, info):
        ex = self.executable
        func = None
        for mod in ex.kernel_libs:
            func = mod.get_function(info.name, allow_missing=True)
            if func is not None:
                break
        if func is None and info.kind == FuncKind.PACKED:
            for mod in ex.imported_modules:
                func = mod.get_function(info.name, allow_missing=True)
                if func is not None:
                    break
            if func is None:
                func = get_global_func(info.name, allow_missing=True)
        if isinstance(func, PackedFunc) and func.is_python:
            func = func.python_func  # same semantics here, without the wrapper's checks
        return func

    def _resolve_functions(self):
        ex = self.executable
        pool, missing = [], []
        for index, info in enumerate(ex.func_table):
            if info.kind == FuncKind.VM:
                pool.append(VMClosure(self, index))
                continue
            func = self._resolve_one(info)
            if func is None:
                missing.append(index)
            pool.append(func)
        if missing:
            users = {i: [] for i in missing}
            for info in ex.func_table:
                if info.kind != FuncKind.VM:
                    continue
                for instr in ex.instructions[info.start:info.end]:
                    if instr.op.name != "call":
                        continue
                    refs = [instr.field("func")] + [a.value for a in instr.field("args")
                                                    if a.kind == ArgKind.FUNC]
                    for ref in refs:
                        if ref in users and info.name not in users[ref]:
                            users[ref].append(info.name)
            lines = [f"  '{ex.func_table[i].name}' ({ex.func_table[i].kind.name.lower()}, "
                     f"used by {', '.join(users[i]) or 'no function'})" for i in missing]
            raise ValueError(
                f"VirtualMachine: {len(missing)} function(s) could not be resolved (searched "
                f"the executable's kernel libraries, its imported modules, then the global "
                f"registry):\n" + "\n".join(lines))
        return pool

    def _python_code(self):
        """The python engine's plain decoded code (decoded on first use)."""
        if self._plain is None:
            self._plain = self._decode_all(None)
            if self._instrument is None:
                self._funcs = self._plain
        return self._plain

    def _decode_all(self, wrap):
        ex = self.executable
        out = []
        for index, info in enumerate(ex.func_table):
            if info.kind != FuncKind.VM:
                out.append(None)
                continue
            code = decode_function(ex, index, self._pool, self, _invoke_closure_builtin, wrap)
            pad = (None,) * (info.num_regs + 1 - info.num_args)  # + the scratch register
            out.append((code, pad, info.num_args, info.name))
        return out

    # -- calling ---------------------------------------------------------------------------

    def _func_index(self, name):
        index = self.executable.func_map.get(name)
        if index is None or self.executable.func_table[index].kind != FuncKind.VM:
            raise ValueError(f"VirtualMachine: no VM function '{name}'; available: "
                             f"{', '.join(self.executable.vm_function_names()) or 'none'}")
        return index

    def _check_args(self, index, args, kwargs=None):
        info = self.executable.func_table[index]
        if kwargs:
            args = _by_name(info, args, kwargs)
        if len(args) != info.num_args:
            params = f" ({', '.join(info.param_names)})" if info.param_names else ""
            raise TypeError(f"{info.name}() takes {info.num_args} argument(s){params}, "
                            f"got {len(args)}")
        for arg in args:
            if isinstance(arg, _CONVERTED):
                return [_to_runtime(a) for a in args]
        return args

    def get_function(self, name):
        """A callable running VM function ``name`` (numpy arrays accepted for tensors)."""
        entry = self._saved.get(name) or self._entries.get(name)
        if entry is not None:
            return entry
        index = self._func_index(name)
        if self._native is not None:
            entry = self._entries[name] = self._native.entry(index)
            return entry
        run, check = self._run, self._check_args
        num_args = self.executable.func_table[index].num_args

        def invoke(*args):
            if len(args) == num_args:
                for arg in args:
                    if isinstance(arg, _CONVERTED):
                        break
                else:
                    return run(index, args)
            return run(index, check(index, args))

        invoke.__name__ = name
        invoke.__qualname__ = f"VirtualMachine[{name!r}]"
        self._entries[name] = invoke
        return invoke

    def __getitem__(self, name):
        return self.get_function(name)

    def invoke_closure(self, closure, *args):
        """Calls a closure (a VMClosure of this VM, or any callable) with ``args``."""
        if isinstance(closure, VMClosure):
            if closure.vm is not self:
                return closure.vm.invoke_closure(closure, *args)
            full = closure.saved_args + tuple(args)
            return self._run(closure.func_index, self._check_args(closure.func_index, full))
        return closure(*args)

    def _run(self, fidx, args):
        """Runs VM function ``fidx`` on checked ``args`` with the engine in use."""
        if self._native is not None and self._instrument is None:
            return self._native.run(fidx, *args)
        return self._interpret(fidx, args)

    def _interpret(self, fidx, args):
        """The python engine's interpreter loop."""
        funcs = self._funcs
        if funcs is None:
            self._python_code()
            funcs = self._funcs
        code, pad, _, _ = funcs[fidx]
        regs = [*args, *pad]
        stack = []
        pc = 0
        try:
            while True:
                ins = code[pc]
                op = ins[0]
                if op == OP_CALL2:
                    regs[ins[1]] = ins[2](regs[ins[3]], regs[ins[4]])
                    pc += 1
                elif op == OP_CALL1:
                    regs[ins[1]] = ins[2](regs[ins[3]])
                    pc += 1
                elif op == OP_CALL3:
                    regs[ins[1]] = ins[2](regs[ins[3]], regs[ins[4]], regs[ins[5]])
                    pc += 1
                elif op == OP_CALLN:
                    argv = ins[3][:]
                    for pos, reg in ins[4]:
                        argv[pos] = regs[reg]
                    regs[ins[1]] = ins[2](*argv)
                    pc += 1
                elif op == OP_RET:
                    value = regs[ins[1]]
                    if not stack:
                        return value
                    code, pc, regs, fidx = stack.pop()
                    regs[code[pc][1]] = value
                    pc += 1
                elif op == OP_IF:
                    cond = regs[ins[1]]
                    if cond is True or (cond is not False and _truth(cond)):
                        pc += 1
                    else:
                        pc = ins[2]
                elif op == OP_GOTO:
                    pc = ins[1]
                elif op == OP_VMCALL or op == OP_INVOKE:
                    argv = ins[3][:]
                    for pos, reg in ins[4]:
                        argv[pos] = regs[reg]
                    if op == OP_INVOKE:
                        closure = argv[1]
                        if type(closure) is not VMClosure or closure.vm is not self:
                            regs[ins[1]] = ins[2](*argv)
                            pc += 1
                            continue
                        callee = closure.func_index
                        argv = list(closure.saved_args) + argv[2:]
                        argv = self._check_args(callee, argv)
                    else:
                        callee = ins[2]
                    if len(stack) >= MAX_CALL_DEPTH:
                        raise RecursionError(f"VM call depth exceeded {MAX_CALL_DEPTH}")
                    stack.append((code, pc, regs, fidx))
                    fidx = callee
                    code, pad, _, _ = funcs[fidx]
                    regs = [*argv, *pad]
                    pc = 0
                else:  # OP_CALL0
                    regs[ins[1]] = ins[2]()
                    pc += 1
        except Exception as err:
            if hasattr(err, "add_note"):
                err.add_note(describe_position(self.executable, fidx, pc, len(stack)))
            raise

    def save_function(self, func_name, saved_name, *args, include_return=True, **kwargs):
        """Saves ``func_name`` bound to ``args`` (positional, then ``kwargs`` by parameter name)
        as a function of no arguments, ``saved_name`` (for timing without the cost of passing
        arguments); with ``include_return=False`` it returns None."""
        index = self._func_index(func_name)
        checked = self._check_args(index, args, kwargs)
        run = self._run

        def saved():
            result = run(index, checked)
            return result if include_return else None

        self._saved[saved_name] = saved

    # -- stateful API ----------------------------------------------------------------------

    def set_input(self, func_name, *args, **kwargs):
        """Stores the arguments of ``func_name`` for ``invoke_stateful``: positional ones first,
        then ``kwargs`` by parameter name."""
        index = self._func_index(func_name)
        self._inputs[func_name] = self._check_args(index, args, kwargs)

    def invoke_stateful(self, func_name):
        """Runs ``func_name`` on the inputs given by ``set_input``; keeps the result."""
        index = self._func_index(func_name)
        if func_name not in self._inputs:
            raise ValueError(f"invoke_stateful('{func_name}'): call set_input first")
        self._outputs[func_name] = self._run(index, self._inputs[func_name])

    def get_outputs(self, func_name):
        """The result of the last ``invoke_stateful``; tuples come back as Python tuples."""
        if func_name not in self._outputs:
            raise ValueError(f"get_outputs('{func_name}'): call invoke_stateful first")

        def unpack(value):
            return tuple(unpack(v) for v in value) if isinstance(value, Array) else value

        return unpack(self._outputs[func_name])

    # -- measurement -----------------------------------------------------------------------

    def time_evaluator(self, func_name, dev=None, number=10, repeat=1, min_repeat_ms=0):
        """A timer for ``func_name`` returning a BenchmarkResult (see rvm.runtime.profiling)."""
        return _time_evaluator(self.get_function(func_name), number, repeat, min_repeat_ms)

    def set_instrument(self, instrument):
        """Calls ``instrument(func, name, before_run, ret_value, *args)`` around every
        packed call; returning ``SKIP_RUN`` before the call skips it. None removes it."""
        self._instrument = instrument
        if self._native is not None:
            self._native.use_python = instrument is not None
        if instrument is None:
            self._funcs = self._python_code()
        else:
            self._funcs = self._decode_all(instrument_wrapper(instrument))

    def profile(self, func_name, *args):
        """Runs ``func_name`` once, timing every call site; returns a ProfileReport."""
        index = self._func_index(func_name)
        checked = self._check_args(index, args)
        report = ProfileReport(func_name)
        saved = self._funcs
        self._funcs = self._decode_all(timing_wrapper(report, self.executable))
        try:
            report.run(lambda: self._interpret(index, checked))
        finally:
            self._funcs = saved
        return report

    def memory_stats(self):
        """Allocation counters of each device's allocator (both engines' allocations)."""
        stats = [alloc.stats() for alloc in self.allocators]
        if self._native is not None:
            for row, (requests, allocations, nbytes) in zip(stats, self._native.memory_stats()):
                row["requests"] += requests
                row["allocations"] += allocations
                row["bytes_allocated"] += nbytes
                row["reuses"] = row["requests"] - row["allocations"]
        return stats


class VMModule(Module):
    """``vm.module``: the VM's functions as a runtime Module (``time_evaluator``, lookup)."""

    type_key = "relax.VirtualMachine"

    def __init__(self, vm):
        super().__init__()
        self._vm = vm

    def _get_own_function(self, name):
        if name in self._own_function_names():
            return PackedFunc(self._vm.get_function(name))
        return None

    def _own_function_names(self):
        return self._vm.executable.vm_function_names() + list(self._vm._saved)

