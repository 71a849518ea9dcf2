"""rvm.runtime.load_module reads exported executables (SPEC §4)."""
import numpy as np
import pytest

import rvm
from rvm.bytecode.builder import ExecBuilder
from rvm.vm.machine import VirtualMachine


def test_load_module_round_trip(tmp_path):
    rvm.register_func("test.load_module.add", lambda a, b: rvm.nd.array(a.numpy() + b.numpy()),
                      override=True)
    ib = ExecBuilder()
    with ib.function("func0", num_inputs=2):
        ib.emit_call("test.load_module.add", args=[ib.r(0), ib.r(1)], dst=ib.r(2))
        ib.emit_ret(ib.r(2))
    ex = ib.get()
    path = tmp_path / "add.rvm"
    ex.export_library(str(path))
    loaded = rvm.runtime.load_module(str(path))
    assert loaded.as_text() == ex.as_text()
    a = rvm.nd.array(np.arange(3, dtype="float32"))
    out = VirtualMachine(loaded, rvm.cpu())["func0"](a, a)
    np.testing.assert_array_equal(out.numpy(), [0, 2, 4])


def test_load_module_rejects_unknown_files(tmp_path):
    path = tmp_path / "junk.bin"
    path.write_bytes(b"\x00junk data")
    with pytest.raises(ValueError, match="not a known module file"):
        rvm.runtime.load_module(str(path))
