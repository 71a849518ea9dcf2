"""Hostile executables and endless loops: both engines raise, never crash or hang the
process. Each test runs once per engine."""
import signal
import struct
import threading
import zlib

import msgpack
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rvm.bytecode.builder import ExecBuilder
from rvm.bytecode.contract import MakeCode, MatchCode
from rvm.bytecode.executable import Executable
from rvm.bytecode.function import FuncInfo, FuncKind
from rvm.bytecode.instruction import decode_instructions
from rvm.bytecode.serialize import FORMAT_VERSION, MAGIC, SECTIONS
from rvm.runtime.container import Array, ShapeTuple
from rvm.runtime.data_type import DataType
from rvm.runtime.device import cpu
from rvm.runtime.ndarray import array
from rvm.runtime.packed_func import register_func
from rvm.vm.machine import VirtualMachine
from tests.runtime.ext_lib import load_ext_library

register_func("test.vm.hostile.ident", lambda x: x, override=True)


@pytest.fixture(scope="module", autouse=True)
def ext(tmp_path_factory):
    return load_ext_library(tmp_path_factory.mktemp("ext"))


def _program():
    """Every C builtin, a C and a Python callee, a VM call, IF and GOTO."""
    ib = ExecBuilder()
    f32 = ib.c(ib.convert_constant(DataType("float32")))
    shape = ib.c(ib.convert_constant(ShapeTuple((2, 3))))
    store, load = int(MatchCode.STORE), int(MakeCode.LOAD)
    with ib.function("main", num_inputs=2, param_names=["x", "n"]):
        ib.emit_call("vm.builtin.check_tensor_info", args=[ib.r(0), 2, f32, "main: x"])
        ib.emit_call("vm.builtin.alloc_shape_heap", args=[ib.vm_state(), 2], dst=ib.r(2))
        ib.emit_call("vm.builtin.match_shape", args=[ib.r(0), ib.r(2), 2, store, 0, store, 1,
                                                     "main: x"])
        ib.emit_call("vm.builtin.make_shape", args=[ib.r(2), 2, load, 1, load, 0], dst=ib.r(3))
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
        ib.emit_call("test.vm.hostile.ident", args=[ib.r(0)], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    return ib.get()


ARGUMENT_SETS = [(np.ones((2, 3), "float32"), 1), (np.ones((2, 3), "float32"), 0),
                 (np.zeros((3, 2), "float32"), array(np.array(True))), (5, "x"),
                 (np.ones(6, "float64"), None), (Array([1, 2]), ShapeTuple((1,)))]


def _run_hostile(ex):
    if any(instr.jump_offset is not None and instr.jump_offset <= 0 for instr in ex.instructions):
        return   # may loop forever, on either engine
    try:
        vm = VirtualMachine(ex, cpu())
    except Exception:   # refused: resolution, linking
        return
    for args in ARGUMENT_SETS:
        for name in vm.executable.vm_function_names():
            info = vm.executable.function_info(name)
            try:
                vm[name](*(list(args) + [None] * info.num_args)[:info.num_args])
            except Exception:
                pass


def test_the_hostile_program_runs():
    vm = VirtualMachine(_program(), cpu())
    x = np.arange(6, dtype="float32").reshape(2, 3)
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


VALID = _program().save_to_bytes()
# Small ints (registers, indices, offsets, counts), argument words of every kind, anything.
_WORDS = (st.integers(-2, 16)
          | st.tuples(st.integers(0, 6), st.integers(0, 16)).map(lambda kv: (kv[0] << 56) | kv[1])
          | st.integers(-(1 << 63), (1 << 63) - 1))


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(st.integers(0, 10_000), _WORDS), min_size=1, max_size=4),
       st.lists(st.tuples(st.integers(0, 1), st.integers(2, 6), st.integers(-2, 40)),
                max_size=2))
def test_mutated_verified_executables_never_crash(code_edits, table_edits):
    """Valid checksums, mutated code words and function table: what the verifier lets
    through runs, raising at worst."""
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


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(st.integers(0, 10_000), _WORDS), min_size=1, max_size=4),
       st.integers(8, 20), st.integers(0, 3))
def test_unverified_executables_never_crash(code_edits, num_regs, num_args):
    """The same without the verifier: the link step and the native engine's checks of the
    linked form refuse what would read out of bounds."""
    words = _program().words
    for pos, word in code_edits:
        words[pos % len(words)] = word
    try:
        instructions = decode_instructions(words)
    except Exception:
        return
    ex = _program()
    table = [FuncInfo(FuncKind.VM, "main", 0, len(instructions), num_args, num_regs)]
    table += [info for info in ex.func_table[1:] if info.kind != FuncKind.VM]
    try:
        hostile = Executable(table, ex.constants, instructions, verify=False)
    except Exception:
        return
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
    vm = VirtualMachine(ib.get(), cpu())
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
