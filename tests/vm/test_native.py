"""The native engine specifically: engine choice, C callees, frames, counters, and hostile
executables that must raise, never crash the process."""
import signal
import struct
import sys
import threading
import zlib

import msgpack
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rvm.bytecode.builder import ExecBuilder
from rvm.bytecode.executable import Executable
from rvm.bytecode.function import FuncInfo, FuncKind
from rvm.bytecode.opcodes import decode_instructions
from rvm.bytecode.serialize import FORMAT_VERSION, MAGIC, SECTIONS
from rvm.runtime.container import Array, ShapeTuple
from rvm.runtime.data_type import DataType
from rvm.runtime.device import cpu
from rvm.runtime.ndarray import array
from rvm.runtime.packed_func import register_func
from rvm.vm.builtins_shape import MAKE_LOAD, MATCH_STORE
from rvm.vm.machine import VirtualMachine
from tests.runtime.ext_lib import load_ext_library

register_func("test.vm.native.ident", lambda x: x, override=True)
register_func("test.vm.native.pair", lambda a, b: (a, b), override=True)
register_func("test.vm.native.le", lambda a, b: a <= b, override=True)
register_func("test.vm.native.sub", lambda a, b: a - b, override=True)
register_func("test.vm.native.add", lambda a, b: a + b, override=True)


@pytest.fixture(scope="module", autouse=True)
def ext(tmp_path_factory):
    return load_ext_library(tmp_path_factory.mktemp("ext"))


def _closures():
    ib = ExecBuilder()
    with ib.function("adder", num_inputs=2):
        ib.emit_ret(ib.r(0))
    with ib.function("make", num_inputs=1):
        ib.emit_call("vm.builtin.make_closure", args=[ib.f("adder"), ib.r(0)], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    return ib.get()


def test_engine_choice():
    ib = ExecBuilder()
    with ib.function("ident", num_inputs=1):
        ib.emit_ret(ib.r(0))
    ex = ib.get()
    assert VirtualMachine(ex, cpu(), engine="native").engine == "native"
    assert VirtualMachine(ex, cpu(), engine="python").engine == "python"
    with pytest.raises(ValueError, match="engine must be one of"):
        VirtualMachine(ex, cpu(), engine="jit")
    vm = VirtualMachine(_closures(), cpu())
    assert vm.engine == "native"
    add = vm["make"](3)
    assert vm.invoke_closure(add, 4) == 3 and add(5) == 3


def test_c_functions_python_values_and_error_positions():
    ib = ExecBuilder()
    with ib.function("main", num_inputs=2):
        ib.emit_call("myadd", args=[ib.r(0), 5], dst=ib.r(2))
        ib.emit_call("test.vm.native.pair", args=[ib.r(2), "s"], dst=ib.r(3))   # a Python tuple
        ib.emit_call("ext.type_codes", args=[ib.r(3), ib.r(1), ib.vm_state()], dst=ib.r(4))
        ib.emit_call("ext.echo", args=["text"], dst=ib.r(5))
        ib.emit_call("vm.builtin.make_tuple", args=[ib.r(3), ib.r(4), ib.r(5)], dst=ib.r(6))
        ib.emit_ret(ib.r(6))
    with ib.function("fails", num_inputs=0):
        ib.set_source("fails", "lv1")
        ib.emit_call("ext.fail", args=["ValueError: boom"], dst=ib.r(0))
        ib.emit_ret(ib.r(0))
    vm = VirtualMachine(ib.get(), cpu(), engine="native")
    pair, codes, text = vm["main"](1, array(np.ones(2, "float32")))
    assert pair == (6, "s") and text == "text"
    assert list(codes) == [13, 10, 6]   # array, NDArray, opaque VM state
    with pytest.raises(ValueError, match="boom") as info:
        vm["fails"]()
    notes = "\n".join(info.value.__notes__)
    assert "in VM function 'fails', instruction 0: call  ext.fail" in notes
    assert "binding fails:lv1" in notes
    with pytest.raises(TypeError, match=r"main\(\) takes 2 argument\(s\), got 1"):
        vm["main"](1)


def _recursive():
    ib = ExecBuilder()
    with ib.function("depth", num_inputs=1):   # depth(n) = 0 if n <= 0 else 1 + depth(n-1)
        more = ib.label()
        ib.emit_call("test.vm.native.le", args=[ib.r(0), 0], dst=ib.r(1))
        ib.emit_if(ib.r(1), more)
        ib.emit_ret(ib.r(0))
        ib.bind(more)
        ib.emit_call("test.vm.native.sub", args=[ib.r(0), 1], dst=ib.r(2))
        ib.emit_call("depth", args=[ib.r(2)], dst=ib.r(3))
        ib.emit_call("test.vm.native.add", args=[ib.r(3), 1], dst=ib.r(4))
        ib.emit_ret(ib.r(4))
    with ib.function("forever", num_inputs=1):
        ib.emit_call("forever", args=[ib.r(0)], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    return ib.get()


def test_deep_recursion_uses_no_c_or_python_recursion():
    vm = VirtualMachine(_recursive(), cpu(), engine="native")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)
    try:
        assert vm["depth"](1000) == 1000
    finally:
        sys.setrecursionlimit(limit)
    with pytest.raises(RecursionError, match="VM call depth exceeded 100000") as info:
        vm["forever"](0)
    assert "(call depth 100000)" in "\n".join(info.value.__notes__)
    assert vm["depth"](3) == 3   # the frames were unwound


def _planned_program():
    ib = ExecBuilder()
    shape = ib.c(ib.convert_constant(ShapeTuple((4,))))
    f32 = ib.c(ib.convert_constant(DataType("float32")))
    with ib.function("main", num_inputs=1):
        ib.emit_call("vm.builtin.alloc_storage", args=[ib.vm_state(), shape, 0, f32],
                     dst=ib.r(1))
        ib.emit_call("vm.builtin.alloc_tensor", args=[ib.r(1), 0, shape, f32], dst=ib.r(2))
        ib.emit_call("vm.builtin.alloc_storage", args=[ib.vm_state(), 16, 0, f32],
                     dst=ib.r(3))
        ib.emit_call("vm.builtin.alloc_tensor", args=[ib.r(3), 0, shape, f32], dst=ib.r(4))
        ib.emit_call("vm.builtin.make_tuple", args=[ib.r(2), ib.r(4)], dst=ib.r(5))
        ib.emit_ret(ib.r(4))
    with ib.function("too_big", num_inputs=0):
        ib.emit_call("vm.builtin.alloc_storage", args=[ib.vm_state(), 4, 0, f32], dst=ib.r(0))
        ib.emit_call("vm.builtin.alloc_tensor", args=[ib.r(0), 56, shape, f32], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    return ib.get()


def test_storage_pool_counters_and_reuse():
    vm = VirtualMachine(_planned_program(), cpu(), engine="native")
    for _ in range(50):
        out = vm["main"](0)
    assert out.shape == (4,)
    stats = vm.memory_stats()[0]
    assert (stats["requests"], stats["allocations"], stats["reuses"]) == (100, 3, 97)
    assert stats["bytes_allocated"] == 3 * 64
    naive = VirtualMachine(_planned_program(), cpu(), memory_cfg="naive", engine="native")
    for _ in range(5):
        naive["main"](0)
    assert naive.memory_stats()[0]["allocations"] == 10
    assert naive.memory_stats()[0]["bytes_allocated"] == 5 * (16 + 64)   # exact sizes
    with pytest.raises(ValueError, match=r"alloc_tensor: float32\[4\] \(16 bytes\) at offset 56 "
                                         "does not fit in a storage of 64 bytes"):
        vm["too_big"]()


def test_instrumented_calls_run_on_the_python_engine():
    vm = VirtualMachine(_planned_program(), cpu(), engine="native")
    main = vm["main"]
    seen = []
    vm.set_instrument(lambda func, name, before, ret, *args: seen.append(name) and None)
    main(0)
    assert "vm.builtin.alloc_tensor" in seen
    vm.set_instrument(None)
    seen.clear()
    main(0)
    assert seen == []


# -- hostile executables --------------------------------------------------------------------

def _native_program():
    """Every native builtin, a C and a Python callee, a VM call, IF and GOTO."""
    ib = ExecBuilder()
    f32 = ib.c(ib.convert_constant(DataType("float32")))
    shape = ib.c(ib.convert_constant(ShapeTuple((2, 3))))
    with ib.function("main", num_inputs=2, param_names=["x", "n"]):
        ib.emit_call("vm.builtin.check_tensor_info", args=[ib.r(0), 2, f32, "main: x"])
        ib.emit_call("vm.builtin.alloc_shape_heap", args=[ib.vm_state(), 2], dst=ib.r(2))
        ib.emit_call("vm.builtin.match_shape", args=[ib.r(0), ib.r(2), 2, MATCH_STORE, 0,
                                                     MATCH_STORE, 1, "main: x"])
        ib.emit_call("vm.builtin.make_shape", args=[ib.r(2), 2, MAKE_LOAD, 1, MAKE_LOAD, 0],
                     dst=ib.r(3))
        ib.emit_call("vm.builtin.check_shape_info", args=[ib.r(3), 2, "s"])
        ib.emit_call("vm.builtin.alloc_storage", args=[ib.vm_state(), shape, 0, f32],
                     dst=ib.r(4))
        ib.emit_call("vm.builtin.alloc_tensor", args=[ib.r(4), 0, shape, f32], dst=ib.r(5))
        ib.emit_call("vm.builtin.reshape", args=[ib.r(0), ib.r(3)], dst=ib.r(6))
        ib.emit_call("vm.builtin.shape_of", args=[ib.r(6)], dst=ib.r(12))
        ib.emit_call("vm.builtin.make_tuple", args=[ib.r(5), ib.r(6), ib.r(1), "s"], dst=ib.r(7))
        ib.emit_call("vm.builtin.tuple_getitem", args=[ib.r(7), 1], dst=ib.r(8))
        ib.emit_call("ext.sum_f32", args=[ib.r(8)], dst=ib.r(9))
        ib.emit_call("vm.builtin.read_if_cond", args=[ib.r(1)], dst=ib.r(10))
        skip, done = ib.label(), ib.label()
        ib.emit_if(ib.r(10), skip)
        ib.emit_call("helper", args=[ib.r(7)], dst=ib.r(7))
        ib.emit_goto(done)
        ib.bind(skip)
        ib.emit_call("vm.builtin.null_value", dst=ib.r(12))
        ib.bind(done)
        ib.emit_call("ext.echo", args=[ib.r(7)], dst=ib.r(11))
        ib.emit_call("vm.builtin.copy", args=[ib.r(11)], dst=ib.r(11))
        ib.emit_ret(ib.r(11))
    with ib.function("helper", num_inputs=1):
        ib.emit_call("vm.builtin.check_tuple_info", args=[ib.r(0), 4, "helper"])
        ib.emit_call("test.vm.native.ident", args=[ib.r(0)], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    return ib.get()


ARGUMENT_SETS = [(np.ones((2, 3), "float32"), 1), (np.ones((2, 3), "float32"), 0),
                 (np.zeros((3, 2), "float32"), array(np.array(True))), (5, "x"),
                 (np.ones(6, "float64"), None), (Array([1, 2]), ShapeTuple((1,)))]


def _run_hostile(ex):
    if any(instr.jump_offset is not None and instr.jump_offset <= 0 for instr in ex.instructions):
        return   # may loop forever, on either engine
    try:
        vm = VirtualMachine(ex, cpu(), engine="native")
    except Exception:   # refused: resolution, decoding
        return
    for args in ARGUMENT_SETS:
        for name in vm.executable.vm_function_names():
            info = vm.executable.function_info(name)
            try:
                vm[name](*(list(args) + [None] * info.num_args)[:info.num_args])
            except Exception:
                pass


def test_the_hostile_program_runs_on_both_engines():
    ex = _native_program()
    x = np.arange(6, dtype="float32").reshape(2, 3)
    for engine in ("python", "native"):
        vm = VirtualMachine(ex, cpu(), engine=engine)
        storage, reshaped, n, s = vm["main"](x, 0)
        assert reshaped.shape == (3, 2) and n == 0 and s == "s"
        with pytest.raises(ValueError, match=r"main: x: expected dtype float32, got float64"):
            vm["main"](x.astype("float64"), 0)


def _file(payloads):
    out = [struct.pack("<8sI", MAGIC, FORMAT_VERSION)]
    for index, name in enumerate(SECTIONS):
        blob = msgpack.packb(payloads[name], use_bin_type=True)
        out.append(struct.pack("<IQI", index, len(blob), zlib.crc32(blob)) + blob)
    return b"".join(out)


def _payloads(data):
    out, pos = {}, 12
    for name in SECTIONS:
        _, length, _ = struct.unpack_from("<IQI", data, pos)
        out[name] = msgpack.unpackb(data[pos + 16:pos + 16 + length], raw=False)
        pos += 16 + length
    return out


VALID = _native_program().save_to_bytes()
# Small ints (registers, indices, offsets, counts), argument words of every kind, anything.
_WORDS = (st.integers(-2, 16)
          | st.tuples(st.integers(0, 6), st.integers(0, 16)).map(lambda kv: (kv[0] << 56) | kv[1])
          | st.integers(-(1 << 63), (1 << 63) - 1))


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(st.integers(0, 10_000), _WORDS), min_size=1, max_size=4),
       st.lists(st.tuples(st.integers(0, 1), st.integers(2, 6), st.integers(-2, 40)),
                max_size=2))
def test_mutated_verified_executables_never_crash(code_edits, table_edits):
    """Valid checksums, mutated code words and function table: what the verifier lets
    through runs on the native engine, raising at worst."""
    payloads = _payloads(VALID)
    code = payloads["code"]
    for pos, word in code_edits:
        code[pos % len(code)] = word
    for func, field, value in table_edits:
        if func < len(payloads["functions"]):
            payloads["functions"][func][field] = value
    try:
        ex = Executable.from_bytes(_file(payloads))
    except Exception:
        return
    _run_hostile(ex)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(st.integers(0, 10_000), _WORDS), min_size=1, max_size=4),
       st.integers(8, 20), st.integers(0, 3))
def test_unverified_executables_never_crash(code_edits, num_regs, num_args):
    """The same without the verifier: the native engine's decoder checks every word."""
    words = _native_program().words
    for pos, word in code_edits:
        words[pos % len(words)] = word
    try:
        instructions = decode_instructions(words)
    except Exception:
        return
    ex = _native_program()
    main = ex.func_table[0]
    table = [FuncInfo(FuncKind.VM, "main", 0, len(instructions), num_args, num_regs)]
    table += [info for info in ex.func_table[1:] if info.kind != FuncKind.VM]
    try:
        hostile = Executable(table, ex.constants, instructions, verify=False)
    except Exception:
        return
    assert main.name == "main"
    _run_hostile(hostile)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def test_an_endless_loop_can_be_interrupted():
    ib = ExecBuilder()
    with ib.function("spin", num_inputs=1):
        top, done = ib.label(), ib.label()
        ib.bind(top)
        ib.emit_if(ib.r(0), done)
        ib.emit_goto(top)
        ib.bind(done)
        ib.emit_ret(ib.r(0))
    vm = VirtualMachine(ib.get(), cpu(), engine="native")
    previous = signal.signal(signal.SIGALRM, _interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.2)
    try:
        with pytest.raises(KeyboardInterrupt):
            vm["spin"](True)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    ticks = []
    timer = threading.Timer(0.2, lambda: ticks.append(1) or signal.raise_signal(signal.SIGALRM))
    signal.signal(signal.SIGALRM, _interrupt)
    timer.start()   # another thread runs while the loop spins, and stops it
    try:
        with pytest.raises(KeyboardInterrupt):
            vm["spin"](True)
    finally:
        timer.join()
        signal.signal(signal.SIGALRM, previous)
    assert ticks == [1]


def test_a_vm_used_from_two_threads_at_once_raises():
    entered, release = threading.Event(), threading.Event()

    def wait(x):
        entered.set()
        release.wait(5)
        return x

    register_func("test.vm.native.wait", wait, override=True)
    ib = ExecBuilder()
    with ib.function("slow", num_inputs=1):
        ib.emit_call("test.vm.native.wait", args=[ib.r(0)], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    vm = VirtualMachine(ib.get(), cpu(), engine="native")
    results = []
    worker = threading.Thread(target=lambda: results.append(vm["slow"](1)))
    worker.start()
    entered.wait(5)
    try:
        with pytest.raises(RuntimeError, match="one thread at a time"):
            vm["slow"](2)
    finally:
        release.set()
        worker.join()
    assert results == [1] and vm["slow"](3) == 3


def test_c_callees_without_the_gil():
    ib = ExecBuilder()
    with ib.function("main", num_inputs=2):
        ib.emit_call("ext.sum_f32", args=[ib.r(0)], dst=ib.r(2))
        ib.emit_call("ext.call_n", args=[ib.r(1), 3], dst=ib.r(3))   # calls back into Python
        ib.emit_call("myadd", args=[ib.r(0), 1], dst=ib.r(4))        # fails in C
        ib.emit_ret(ib.r(2))
    vm = VirtualMachine(ib.get(), cpu(), engine="native", release_gil=True)
    seen = []
    with pytest.raises(TypeError, match="myadd expects two ints"):
        vm["main"](np.ones(4, "float32"), seen.append)
    assert seen == [0, 1, 2]
    ib = ExecBuilder()
    with ib.function("main", num_inputs=1):
        ib.emit_call("ext.sum_f32", args=[ib.r(0)], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    vm = VirtualMachine(ib.get(), cpu(), engine="native", release_gil=True)
    assert vm["main"](np.ones(4, "float32")) == 4.0
