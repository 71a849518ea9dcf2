"""VirtualMachine: runs a verified Executable on one of two engines.

At construction the executable is linked once (rvm.vm.link): callees resolved
and classified, argument templates and absolute jumps computed. Both engines
run that linked form:

- the **native** engine (rvm.vm.native, native/src/vm_*.c), the default: the
  interpreter loop in C, calling C kernels and C builtins through their
  function pointers, without the GIL (``release_gil``), and Python callees
  with it;
- the **python** engine (rvm.vm.interpreter), the reference interpreter.

Both allocate from one C allocator (the VM state object, one storage pool per
device) and call the same builtins, so they raise the same errors. Instruments
and profiles run on the engine in use; a debugger (``debug()``) and a traced
profile (``profile(..., trace=)``) run the call in the stepping loop
(rvm.vm.stepper) on either engine.

Threads: a VirtualMachine is used by one thread at a time; make one per
thread, any number of them sharing one Executable.
"""
import time

import numpy as np

from rvm.bytecode.executable import Executable
from rvm.bytecode.function import FuncKind
from rvm.runtime._ffi import _bridge
from rvm.runtime.container import Array
from rvm.runtime.data_type import ML_DTYPES
from rvm.runtime.device import Device, cpu
from rvm.runtime.module import Module
from rvm.runtime.ndarray import NDArray, array, from_dlpack
from rvm.runtime.packed_func import PackedFunc
from rvm.runtime.profiling import time_evaluator as _time_evaluator
from rvm.vm import interpreter
from rvm.vm.builtins_string import string_tensor_arg
from rvm.vm.closure import VMClosure
from rvm.vm.debugger import Debugger
from rvm.vm.link import link
from rvm.vm.native import build_native_engine, native_available
from rvm.vm.profiler import ProfileReport
from rvm.vm.trace import traced_call, write_trace

ENGINES = ("native", "python")
DEFAULT_ENGINE = "native"  # engine=None: this one when the runtime has it
MEMORY_CONFIGS = ("pooled", "naive")
CONVERTED = (np.ndarray, np.generic, tuple, list)  # argument types converted at entry
# the numpy dtypes a tensor can have (in native byte order; others are converted)
TENSOR_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                 "uint64", "float16", "float32", "float64") + tuple(sorted(ML_DTYPES))


def to_runtime(value):
    """Entry conversion: numpy arrays become NDArrays (shared when contiguous, else copied;
    big-endian ones converted), arrays of strings string tensors (``builtins_string``),
    numpy scalars Python scalars, inside tuples and lists too.
    An array no tensor can hold is a TypeError saying why."""
    if isinstance(value, np.ndarray):
        if isinstance(value, np.ma.MaskedArray):
            raise TypeError("a masked array is not a tensor (its mask would be lost); pass "
                            "arr.filled(value) or arr.data")
        if value.dtype.kind in "UO":  # strings stay a numpy array (builtins_string)
            strings = string_tensor_arg(value)
            if strings is not None:
                return strings
        native = value.dtype.newbyteorder("=")
        if native.name not in TENSOR_DTYPES:
            raise TypeError(f"a numpy array of dtype {value.dtype} is not a tensor; expected "
                            f"one of {', '.join(TENSOR_DTYPES)}, or str")
        if native != value.dtype:  # big-endian: a native copy
            return array(value.astype(native))
        if value.flags.c_contiguous and value.flags.writeable and value.size:
            if native.name in ML_DTYPES:  # numpy exports no DLPack of ml_dtypes' types
                raw = from_dlpack(value.view(f"uint{8 * value.dtype.itemsize}"))
                return raw.view(value.shape, native.name)
            return from_dlpack(value)  # (numpy exports empty arrays with strides DLPack refuses)
        return array(value)
    if isinstance(value, np.generic):
        if value.dtype.kind not in "biuf":
            raise TypeError(f"a numpy scalar of dtype {value.dtype} is not a value a VM "
                            "function takes; expected a bool, int or float")
        return value.item()
    if isinstance(value, (tuple, list)) and any(isinstance(v, CONVERTED) for v in value):
        return type(value)(to_runtime(v) for v in value)
    return value


def _converted(info, k, value):
    """``to_runtime(value)`` for argument ``k`` of ``info``; its errors name the parameter."""
    try:
        return to_runtime(value)
    except (TypeError, ValueError, BufferError) as err:
        name = info.param_names[k] if k < len(info.param_names) else f"#{k}"
        raise TypeError(f"{info.name}: parameter '{name}': {err}") from None


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


def _time_limit(value):
    """The time_limit option: positive seconds, or None (0.0 in the engines: no limit)."""
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not 0 < value < 1e9:
        raise ValueError(f"VirtualMachine: time_limit must be a positive number of seconds "
                         f"(or None for no limit), got {value!r}")
    return float(value)


def _limit(name, value, unit):
    """A limit option: a positive int, or None (0 in the engines: no limit)."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0 \
            or value >= 1 << 63:
        raise ValueError(f"VirtualMachine: {name} must be a positive number of {unit} "
                         f"(or None for no limit), got {value!r}")
    return int(value)


class VirtualMachine:
    """Runs the VM functions of an Executable.

    ``engine`` is "native" or "python" (None: ``DEFAULT_ENGINE``); ``memory_cfg`` is
    "pooled" or "naive"; ``release_gil`` (default True) lets the native engine run C
    callees (kernels, C builtins) without the GIL, so other threads run meanwhile.

    Limits (None: none), for running untrusted executables: ``memory_limit``, the bytes
    the VM's storage pools may hold at once (pooled storages are kept for reuse until the
    VM dies, naive ones count while alive); an allocation past it is a MemoryError naming
    the limit. ``step_limit``, the steps one call from Python may take (a step is a
    VM-to-VM call, closures included, or a backward jump); past it the run stops with a
    RuntimeError naming the limit, so an endless loop or runaway recursion ends. Kernels
    count too, separately: the kernels of a run may take ``step_limit`` x 1024 polls in
    all, a poll being an iteration of a kernel loop that encloses other loops (strips of
    65,536 iterations for an innermost loop of unknown or larger extent), of a parallel loop
    or of a while loop; past it the kernel stops with a RuntimeError naming the limit.
    ``time_limit``, the seconds one call from Python may take, counted in wall-clock time
    (a run of a parallel kernel may use that many seconds of CPU on each of its threads, and
    a run on a loaded machine gets less): past it the run stops (at its next step, or inside
    a kernel at its next poll) with a TimeoutError naming the limit.
    Ctrl-C (SIGINT) stops a kernel of a run on the main thread the same way, raising what
    Python's SIGINT handler raises (KeyboardInterrupt) in the caller. A run stopped by a
    limit leaves the VM usable. Kernel heap allocations count against
    ``memory_limit`` while they live.

    ``own_constants`` (default False) gives this VM its own copy of the executable's
    constant tensors (the weights a build binds), made here, instead of reading the
    executable's: threads that each run a VM over one Executable then read separate
    memory, at the cost of the constants' bytes once more per VM. On machines where two
    cores reading the same memory slow each other down, that is what lets threads scale
    (BENCHMARKS.md, "Threads over one Executable").

    >>> from rvm.bytecode.builder import ExecBuilder
    >>> ib = ExecBuilder()
    >>> with ib.function("ident", num_inputs=1):
    ...     _ = ib.emit_ret(ib.r(0))
    >>> VirtualMachine(ib.get(), cpu())["ident"](7)
    7
    """

    def __init__(self, rt_mod, device=None, memory_cfg="pooled", engine=None,
                 release_gil=True, memory_limit=None, step_limit=None, own_constants=False,
                 time_limit=None):
        if not isinstance(rt_mod, Executable):
            raise TypeError(f"VirtualMachine expects an Executable, got {type(rt_mod).__name__}")
        devices = [cpu(0)] if device is None else (
            list(device) if isinstance(device, (list, tuple)) else [device])
        for dev in devices:
            if not isinstance(dev, Device):
                raise TypeError(f"VirtualMachine expects a Device such as rvm.cpu() (or a list "
                                f"of them), got {type(dev).__name__} {dev!r}")
            if dev.device_type != Device.CPU:
                raise ValueError(f"VirtualMachine: device {dev!r} is not supported; "
                                 f"rvm runs on cpu")
        if memory_cfg not in MEMORY_CONFIGS:
            raise ValueError(f"memory_cfg must be one of {sorted(MEMORY_CONFIGS)}, "
                             f"got {memory_cfg!r}")
        engine = DEFAULT_ENGINE if engine is None else engine
        if engine not in ENGINES:
            raise ValueError(f"VirtualMachine: engine must be one of {ENGINES}, got {engine!r}")
        if engine == "native" and not native_available():
            raise ValueError("VirtualMachine: engine='native' is not available (the native "
                             "runtime was built without it); use engine='python'")
        memory_limit = _limit("memory_limit", memory_limit, "bytes")
        self.step_limit = _limit("step_limit", step_limit, "steps")
        self.executable = rt_mod
        self.devices = devices
        self.time_limit = _time_limit(time_limit)
        self.state = _bridge.vm_state(len(devices), memory_cfg == "naive", memory_limit,
                                      self.step_limit, self.time_limit)
        if not isinstance(own_constants, bool):
            raise TypeError(f"VirtualMachine: own_constants must be True or False, got "
                            f"{own_constants!r}")
        constants = [c.copyto(c.device) if isinstance(c, NDArray) else c
                     for c in rt_mod.constants] if own_constants else None
        self.linked = link(rt_mod, self, self.state, constants=constants)
        self.instrument = None        # read by the engines: see set_instrument
        self.profile_samples = None   # the python engine's profile while one runs
        self.active_runs = 0          # the python engine's runs in progress ...
        self.running_thread = None    # ... all on this thread
        self.engine = engine
        self._native = build_native_engine(self, release_gil, self.step_limit) \
            if engine == "native" else None
        self._inputs = {}
        self._outputs = {}
        self._saved = {}
        self._entries = {}
        self.module = VMModule(self)

    # -- calling ---------------------------------------------------------------------------

    def _func_index(self, name):
        index = self.executable.func_map.get(name)
        if index is None or self.executable.func_table[index].kind != FuncKind.VM:
            raise ValueError(f"VirtualMachine: no VM function '{name}'; available: "
                             f"{', '.join(self.executable.vm_function_names()) or 'none'}")
        return index

    def check_args(self, index, args, kwargs=None):
        """``args`` (then ``kwargs`` by parameter name) for VM function ``index``, numpy values
        converted; TypeError naming the parameters for a wrong count."""
        info = self.executable.func_table[index]
        if kwargs:
            args = _by_name(info, args, kwargs)
        if len(args) != info.num_args:
            params = f" ({', '.join(info.param_names)})" if info.param_names else ""
            raise TypeError(f"{info.name}() takes {info.num_args} argument(s){params}, "
                            f"got {len(args)}")
        for arg in args:
            if isinstance(arg, CONVERTED):
                return [_converted(info, k, a) for k, a in enumerate(args)]
        return args

    def get_function(self, name):
        """A callable running VM function ``name`` (numpy arrays accepted for tensors)."""
        entry = self._saved.get(name) or self._entries.get(name)
        if entry is not None:
            return entry
        index = self._func_index(name)
        if self._native is not None:
            entry = self._native.entry(index)
        else:
            def entry(*args):
                return interpreter.run(self, index, self.check_args(index, args))

            entry.__name__ = name
            entry.__qualname__ = f"VirtualMachine[{name!r}]"
        self._entries[name] = entry
        return entry

    def __getitem__(self, name):
        return self.get_function(name)

    def invoke_closure(self, closure, *args):
        """Calls a closure (a VMClosure of this VM, or any callable) with ``args``."""
        if isinstance(closure, VMClosure):
            if closure.vm is not self:
                return closure.vm.invoke_closure(closure, *args)
            full = closure.saved_args + tuple(args)
            return self._run(closure.func_index, self.check_args(closure.func_index, full))
        return closure(*args)

    def _run(self, fidx, args):
        """Runs VM function ``fidx`` on checked ``args`` with the engine in use."""
        if self._native is not None:
            return self._native.run(fidx, *args)
        return interpreter.run(self, fidx, args)

    def save_function(self, func_name, saved_name, *args, include_return=True, **kwargs):
        """Saves ``func_name`` bound to ``args`` (positional, then ``kwargs`` by parameter name)
        as a function of no arguments, ``saved_name`` (for timing without the cost of passing
        arguments); with ``include_return=False`` it returns None."""
        index = self._func_index(func_name)
        checked = self.check_args(index, args, kwargs)
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
        self._inputs[func_name] = self.check_args(index, args, kwargs)

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
        """Calls ``instrument(func, name, before_run, ret_value, *args)`` around every call
        whose callee is not a VM function; returning ``SKIP_RUN`` before the call skips it
        (its result is None). None removes it."""
        if instrument is not None and not callable(instrument):
            raise TypeError(f"set_instrument expects a callable or None, got "
                            f"{type(instrument).__name__}")
        self.instrument = instrument
        if self._native is not None:
            self._native.instrument = instrument

    def profile(self, func_name, *args, trace=None):
        """Runs ``func_name`` once on the engine in use, timing every call site whose callee
        is not a VM function; returns a ProfileReport.

        With ``trace`` (a path), the call runs in the stepping loop instead (rvm.vm.trace,
        either engine, the same callees) and its timeline is written there as Chrome
        trace-event JSON: one slice per call, nested in one per VM function activation."""
        index = self._func_index(func_name)
        checked = self.check_args(index, args)
        if trace is not None:
            start = time.perf_counter()
            result, events, samples = traced_call(self, index, checked)
            total = time.perf_counter() - start
            write_trace(trace, events)
            return ProfileReport(func_name, self.executable, samples, total, result)
        native = self._native
        if native is not None:
            native.start_profile()
        else:
            self.profile_samples = {}
        start = time.perf_counter()
        try:
            result = self._run(index, checked)
        finally:
            total = time.perf_counter() - start
            if native is not None:
                samples = native.stop_profile()
            else:
                samples, self.profile_samples = self.profile_samples, None
        return ProfileReport(func_name, self.executable, samples, total, result)

    def debug(self):
        """A Debugger of this VM (rvm.vm.debugger: what runs where)."""
        return Debugger(self)

    def memory_stats(self):
        """Allocation counters of each device's storage pool; ``vm_bytes_in_use`` is what all
        the VM's pools hold now (what ``memory_limit`` bounds)."""
        stats = []
        for requests, allocations, nbytes, naive, in_use in _bridge.vm_state_stats(self.state):
            stats.append({"kind": "naive" if naive else "pooled", "requests": requests,
                          "allocations": allocations, "reuses": requests - allocations,
                          "bytes_allocated": nbytes, "vm_bytes_in_use": in_use})
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
