"""The format's size limits (rvm.bytecode.serialize): file bytes, section bytes and array
elements, each refused before the contents are used, with the limit named."""
import struct
import tracemalloc
import zlib

import msgpack
import numpy as np
import pytest

import rvm
from rvm.bytecode.builder import ExecBuilder

from rvm.bytecode import serialize
from rvm.bytecode.errors import ExecutableFormatError
from rvm.bytecode.executable import Executable
from rvm.bytecode.serialize import (
    FORMAT_VERSION, MAGIC, MAX_ELEMENTS, MAX_FILE_BYTES, SECTIONS, undump_executable,
)

_EMPTY = {"functions": [], "constants": [], "code": [], "modules": [], "source_map": []}


def raw_file(**payloads):
    """File bytes whose sections hold the given msgpack ``payloads`` (bytes), others empty."""
    out = [struct.pack("<8sI", MAGIC, FORMAT_VERSION)]
    for index, name in enumerate(SECTIONS):
        payload = payloads.get(name, msgpack.packb(_EMPTY[name]))
        out += [struct.pack("<IQI", index, len(payload), zlib.crc32(payload)), payload]
    return b"".join(out)


def test_an_empty_file_of_the_format_loads():
    assert undump_executable(raw_file())["functions"] == []


def test_a_file_over_the_byte_limit_is_refused_unread(tmp_path):
    path = tmp_path / "huge.rvm"
    with open(path, "wb") as f:
        f.write(raw_file())
        f.truncate(1 << 30)  # sparse: 1 GiB on paper
    tracemalloc.start()
    try:
        with pytest.raises(ExecutableFormatError, match=f"the file has more than "
                                                        f"{MAX_FILE_BYTES} bytes, over the "
                                                        f"limit \\(MAX_FILE_BYTES\\)"):
            Executable.load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * MAX_FILE_BYTES, peak


def test_a_larger_file_loads_with_a_raised_limit(tmp_path):
    # A trusted model over the default limit (its weights in the file): the user raises it.
    ib = ExecBuilder()
    with ib.function("main", num_inputs=0):
        weights = ib.c(ib.convert_constant(rvm.nd.array(np.ones(1 << 23, "float32"))))
        ib.emit_call("vm.builtin.copy", args=[weights], dst=ib.r(0))
        ib.emit_ret(ib.r(0))
    path = tmp_path / "big.rvm"
    ib.get().export_library(str(path))
    small = path.stat().st_size - 1
    with pytest.raises(ExecutableFormatError, match="over the limit \\(MAX_FILE_BYTES\\); a "
                       "larger model can be loaded with a higher limit"):
        rvm.runtime.load_module(str(path), max_file_bytes=small)
    ex = rvm.runtime.load_module(str(path), max_file_bytes=small + 1)
    out = rvm.relax.VirtualMachine(ex, rvm.cpu())["main"]()
    assert out.numpy().sum() == 1 << 23


def test_a_section_over_its_byte_limit_is_refused(monkeypatch):
    data = raw_file(code=msgpack.packb(list(range(100))))
    monkeypatch.setitem(serialize.SECTION_BYTES, "code", 50)
    with pytest.raises(ExecutableFormatError, match="section 'code' has 1.. bytes, over the "
                                                    "limit of 50"):
        undump_executable(data)


@pytest.mark.parametrize("name, payload", [
    # 600,000 empty arrays, one byte each on disk, 56 bytes each in Python
    ("source_map", b"\xdd" + struct.pack(">I", 600_000) + b"\x90" * 600_000),
    # arrays nested in arrays: the elements of every level count
    ("functions", msgpack.packb([[[0] * 8] * 8] * 10_000)),
    # maps are not part of the format; their entries count as well
    ("constants", msgpack.packb({str(i): 0 for i in range(300_000)})),
])
def test_more_array_elements_than_the_limit_are_refused(name, payload):
    assert len(payload) <= (serialize.SECTION_BYTES[name] or MAX_FILE_BYTES)
    with pytest.raises(ExecutableFormatError,
                       match=f"section '{name}': more than {MAX_ELEMENTS} array elements in "
                             f"the file, over the limit \\(MAX_ELEMENTS\\)"):
        undump_executable(raw_file(**{name: payload}))


def test_the_element_budget_is_shared_by_the_sections():
    # 16,000 entries of 16 elements: each section alone is under every limit, together
    # they hold more than MAX_ELEMENTS elements
    half = msgpack.packb([[0] * 16] * 16_000)
    assert 17 * 16_000 < MAX_ELEMENTS < 2 * 17 * 16_000
    with pytest.raises(ExecutableFormatError, match="corrupted section 'constants'"):
        undump_executable(raw_file(constants=half))  # under the budget, refused for its form
    with pytest.raises(ExecutableFormatError, match="section 'code': more than"):
        undump_executable(raw_file(constants=half, code=half))
