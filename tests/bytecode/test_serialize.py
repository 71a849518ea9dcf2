"""The file format: round trips, and damaged or hostile files rejected with their reason."""
import struct
import zlib

import msgpack
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rvm.bytecode.errors import BytecodeVerificationError, ExecutableFormatError
from rvm.bytecode.executable import Executable
from rvm.bytecode.function import FuncInfo, FuncKind
from rvm.bytecode.contract import CALL, GOTO, RET, ArgKind
from rvm.bytecode.instruction import Arg, Instruction
from rvm.bytecode.serialize import FORMAT_VERSION, MAGIC, SECTIONS, dump_executable
from rvm.runtime.module import register_module_loader
from rvm.runtime.ndarray import NDArray
from tests.bytecode.programs import NamesModule, build_rich_executable

HEADER, SECTION = 12, 16


def _boundaries(data):
    """(name, header start, payload start, payload end) for each section of a file."""
    out, pos = [], HEADER
    for name in SECTIONS:
        _, length, _ = struct.unpack_from("<IQI", data, pos)
        out.append((name, pos, pos + SECTION, pos + SECTION + length))
        pos += SECTION + length
    return out


def _file(payloads, version=FORMAT_VERSION):
    """A file with the given raw section payload objects and correct checksums."""
    out = [struct.pack("<8sI", MAGIC, version)]
    for index, name in enumerate(SECTIONS):
        blob = msgpack.packb(payloads[name], use_bin_type=True)
        out.append(struct.pack("<IQI", index, len(blob), zlib.crc32(blob)) + blob)
    return b"".join(out)


def _payloads(data):
    return {name: msgpack.unpackb(data[start:end], raw=False)
            for name, _, start, end in _boundaries(data)}


def test_round_trip_keeps_everything(rich_executable, tmp_path):
    path = tmp_path / "rich.rvm"
    rich_executable.export_library(path)
    loaded = Executable.load(path)
    assert loaded.as_text() == rich_executable.as_text()
    assert loaded.words == rich_executable.words
    assert loaded.source_map == {0: ("main", "lv0")}
    for a, b in zip(loaded.constants, rich_executable.constants):
        if isinstance(a, NDArray):
            assert a.dtype == b.dtype and np.array_equal(a.numpy(), b.numpy())
        else:
            assert type(a) is type(b) and a == b
    assert [m.names for m in loaded.kernel_libs] == [["kernel_a"]]
    assert [m.names for m in loaded.imported_modules] == [["other"]]
    assert loaded.save_to_bytes() == rich_executable.save_to_bytes()


def test_truncated_at_every_section_boundary(rich_executable):
    data = rich_executable.save_to_bytes()
    cuts = {0, 4, 8, HEADER}
    for _, head, start, end in _boundaries(data):
        cuts |= {head, head + 7, start, (start + end) // 2}
    cuts.discard(len(data))
    for cut in sorted(cuts):
        with pytest.raises(ExecutableFormatError, match="truncated"):
            Executable.from_bytes(data[:cut])


def test_flipped_byte_in_each_section(rich_executable):
    data = rich_executable.save_to_bytes()
    for name, _, start, end in _boundaries(data):
        for pos in {start, (start + end) // 2, end - 1}:
            bad = bytearray(data)
            bad[pos] ^= 0x5A
            with pytest.raises(ExecutableFormatError, match=f"corrupted section '{name}'"):
                Executable.from_bytes(bytes(bad))


def test_bad_magic_and_newer_version(rich_executable):
    data = rich_executable.save_to_bytes()
    with pytest.raises(ExecutableFormatError, match="bad magic"):
        Executable.from_bytes(b"\x7fELF" + data[4:])
    newer = data[:8] + struct.pack("<I", FORMAT_VERSION + 1) + data[HEADER:]
    with pytest.raises(ExecutableFormatError,
                       match=f"version mismatch: file {FORMAT_VERSION + 1}, runtime "
                             f"{FORMAT_VERSION}"):
        Executable.from_bytes(newer)
    with pytest.raises(ExecutableFormatError, match="trailing bytes"):
        Executable.from_bytes(data + b"\x00")


def _hostile(code, num_args=1, num_regs=2):
    funcs = [FuncInfo(FuncKind.VM, "main", 0, len(code), num_args, num_regs),
             FuncInfo(FuncKind.PACKED, "g")]
    return dump_executable({"functions": funcs, "constants": [], "code": code,
                            "modules": [], "source_map": {}})


@pytest.mark.parametrize("code, reason", [
    ([Instruction(RET, (2,))], "register %2 out of range"),
    ([Instruction(GOTO, (3,)), Instruction(RET, (0,))], "jump target 3 is outside"),
    ([Instruction(CALL, (1, 1, (Arg(ArgKind.CONST, 4),))), Instruction(RET, (1,))],
     "constant index 4 out of range"),
    ([Instruction(CALL, (1, 1, ())), Instruction(GOTO, (-1,))], "has no RET"),
    ([Instruction(RET, (1,))], "%1 is read before it is written"),
])
def test_hostile_bytecode_is_rejected_at_load(code, reason):
    with pytest.raises(BytecodeVerificationError, match=reason) as info:
        Executable.from_bytes(_hostile(code), where="evil.rvm")
    assert str(info.value).startswith("evil.rvm: function 'main'")


@pytest.mark.parametrize("section, value, reason", [
    ("functions", {"a": 1}, "expected a list"),
    ("functions", [[9, "f", 0, 0, 0, 0, []]], "unknown kind 9"),
    ("functions", [[1, "f", -1, 0, 0, 0, []]],
     r"ints in \[0, 2147483647\], got \[-1, 0, 0, 0\]"),
    ("constants", [["ndarray", ["float32", [1 << 40, 1 << 40], b""]]], "needs"),
    ("constants", [["ndarray", ["float99", [1], b"1234"]]], "unknown dtype"),
    ("constants", [["pickle", b"cos\nsystem"]], "unknown tag 'pickle'"),
    ("constants", [["int", "1"]], "int constant has a str"),
    ("code", [1, 0, 0, 1, (7 << 56)], "unknown kind 7"),
    ("code", "abc", "expected a list of words"),
    ("modules", [["kernel", "no.such.module", b""]], "cannot load module of type "
                                                     "'no.such.module'"),
    ("modules", [["kernel", "test.names", b"not a name!"]], "bad name list"),
    ("modules", [["sideload", "test.names", b"a"]], "unknown role"),
    ("source_map", [[0, 1, 2]], "entries must be"),
])
def test_malformed_sections_with_valid_checksums(rich_executable, section, value, reason):
    payloads = _payloads(rich_executable.save_to_bytes())
    payloads[section] = value
    with pytest.raises(ExecutableFormatError, match=reason):
        Executable.from_bytes(_file(payloads))


def _load_or_format_error(data):
    try:
        Executable.from_bytes(data)
    except ExecutableFormatError:
        pass


VALID = build_rich_executable().save_to_bytes()


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(st.integers(0, len(VALID) - 1), st.integers(1, 255)), min_size=1,
                max_size=4), st.integers(0, len(VALID)))
def test_random_byte_mutations_load_or_raise_format_error(flips, cut):
    data = bytearray(VALID)
    for pos, xor in flips:
        data[pos] ^= xor
    _load_or_format_error(bytes(data[:cut]) if cut < len(data) else bytes(data))


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(1 << 63), (1 << 64) - 1) | st.floats()
    | st.text(max_size=8) | st.binary(max_size=8),
    lambda inner: st.lists(inner, max_size=4), max_leaves=8)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(SECTIONS), st.data())
def test_structured_mutations_load_or_raise_format_error(section, data):
    """Valid checksums, mutated contents: reaches the decoders and the verifier."""
    payloads = _payloads(VALID)
    target = payloads[section]
    path = []
    while isinstance(target, list) and target and data.draw(st.booleans()):
        index = data.draw(st.integers(0, len(target) - 1))
        path.append(index)
        target = target[index]
    value = data.draw(_VALUES)
    if path:
        holder = payloads[section]
        for index in path[:-1]:
            holder = holder[index]
        holder[path[-1]] = value
    else:
        payloads[section] = value
    _load_or_format_error(_file(payloads))


def test_modules_are_loaded_only_after_the_bytecode_verifies():
    calls = []
    register_module_loader("test.recorder", lambda data: calls.append(data) or NamesModule(["a"]))
    funcs = [FuncInfo(FuncKind.VM, "main", 0, 1, 1, 1)]
    bad = dump_executable({"functions": funcs, "constants": [],
                           "code": [Instruction(RET, (3,))],
                           "modules": [("kernel", "test.recorder", b"x")], "source_map": {}})
    with pytest.raises(BytecodeVerificationError):
        Executable.from_bytes(bad)
    assert calls == []
    good = dump_executable({"functions": funcs, "constants": [],
                            "code": [Instruction(RET, (0,))],
                            "modules": [("kernel", "test.recorder", b"x")], "source_map": {}})
    assert [m.names for m in Executable.from_bytes(good).kernel_libs] == [["a"]]
    assert calls == [b"x"]
