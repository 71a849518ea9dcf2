"""Resource limits checked on load: frame memory of recursion, int64 constants, section sizes."""
import pytest

from rvm.bytecode import serialize
from rvm.bytecode.builder import ExecBuilder
from rvm.bytecode.constants import decode_constant
from rvm.bytecode.errors import BytecodeVerificationError, ExecutableFormatError
from rvm.bytecode.executable import Executable
from rvm.bytecode.serialize import dump_executable, undump_executable
from rvm.bytecode.verify import MAX_REGS


def _with_registers(num_regs, recursive):
    ib = ExecBuilder()
    with ib.function("f", num_inputs=1):
        if recursive:
            ib.emit_call("f", args=[ib.r(0)], dst=ib.r(0))
        ib.emit_ret(ib.r(0))
    ex = ib.get()
    table = [info._replace(num_regs=num_regs) for info in ex.func_table]
    return table, ex


def _file(table, ex, constants=None):
    return dump_executable({"functions": table, "constants": constants or ex.constants,
                            "code": ex.instructions, "modules": [], "source_map": {}})


def test_a_recursive_function_with_a_huge_frame_is_refused_on_load():
    table, ex = _with_registers(MAX_REGS, recursive=True)
    with pytest.raises(BytecodeVerificationError,
                       match=r"function 'f': may recurse with 1048576 registers per frame; "
                             r"recursive functions may have at most 671"):
        Executable.from_bytes(_file(table, ex))
    table, ex = _with_registers(671, recursive=True)
    assert Executable.from_bytes(_file(table, ex)).func_table[0].num_regs == 671


def test_a_huge_frame_without_recursion_is_accepted():
    table, ex = _with_registers(MAX_REGS, recursive=False)
    assert Executable.from_bytes(_file(table, ex)).func_table[0].num_regs == MAX_REGS
    table, ex = _with_registers(MAX_REGS + 1, recursive=False)
    with pytest.raises(BytecodeVerificationError, match="num_regs <= 1048576"):
        Executable.from_bytes(_file(table, ex))


def test_closures_count_as_calls():
    ib = ExecBuilder()
    with ib.function("f", num_inputs=1):
        ib.emit_call("vm.builtin.make_closure", args=[ib.f("f"), ib.r(0)], dst=ib.r(0))
        ib.emit_ret(ib.r(0))
    ex = ib.get()
    table = [info._replace(num_regs=5000) if info.name == "f" else info
             for info in ex.func_table]
    with pytest.raises(BytecodeVerificationError, match="'f': may recurse"):
        Executable.from_bytes(_file(table, ex))


@pytest.mark.parametrize("entry", [["int", 1 << 63], ["int", -(1 << 63) - 1]])
def test_int_constants_beyond_int64_are_refused(entry):
    # msgpack carries uint64; the runtime's integers are int64.
    with pytest.raises(ExecutableFormatError, match=f"int constant {entry[1]} is outside int64"):
        decode_constant(entry, 0)
    with pytest.raises(ExecutableFormatError, match="shape must be a list of ints"):
        decode_constant(["shape", [entry[1]]], 0)


def test_sections_over_their_entry_limit_are_refused(monkeypatch):
    table, ex = _with_registers(1, recursive=False)
    data = _file(table, ex, constants=[1, 2, 3])
    monkeypatch.setitem(serialize.LIMITS, "constants", 2)
    with pytest.raises(ExecutableFormatError, match="section 'constants' has 3 entries, over "
                                                    "the limit of 2"):
        undump_executable(data)


def test_str_constants_with_a_nul_are_refused():
    # Found by the loader fuzz: the native engine refused such a file at link ("embedded
    # null character") while the python engine ran it.
    with pytest.raises(ExecutableFormatError, match="constant 3: str constant holds a NUL "
                                                    "character at 2"):
        decode_constant(["str", "ab\x00c"], 3)
    assert decode_constant(["str", "abc"], 3) == "abc"
