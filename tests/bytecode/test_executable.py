"""Executable queries, stats, and load_module through the runtime's file-loader registry."""
import pytest

from rvm.bytecode.executable import Executable, load_module
from rvm.bytecode.function import FuncKind
from rvm.runtime.loader import load_module as runtime_load_module


def test_queries(rich_executable):
    ex = rich_executable
    assert ex.vm_function_names() == ["main", "helper"]
    assert ex.function_info("helper").num_args == 1
    assert ex.function_info("kernel_a").kind == FuncKind.PACKED
    with pytest.raises(ValueError, match="no function 'nope'; VM functions: main, helper"):
        ex.function_info("nope")
    assert ex.source_of(0) == ("main", "lv0") and ex.source_of(1) is None
    helper = ex.function_info("helper")
    assert ex.function_at(helper.start) == ex.func_map["helper"]
    assert all(isinstance(w, int) and 0 <= w < 1 << 64 for w in ex.words)


def test_stats(rich_executable):
    text = rich_executable.stats()
    assert "functions: 4 (packed: 2, vm: 2)" in text
    assert "instructions: 6 (call: 3, if: 1, ret: 2)" in text
    assert "constants: 13" in text and "ndarray: 3" in text
    assert "modules: 1 kernel libraries, 1 imported" in text


def test_load_module_dispatches_on_magic(rich_executable, tmp_path):
    path = tmp_path / "m.rvm"
    rich_executable.export_library(path)
    for loader in (load_module, runtime_load_module, Executable.load):
        assert loader(path).as_text() == rich_executable.as_text()
    other = tmp_path / "other.bin"
    other.write_bytes(b"\x7fELF....")
    with pytest.raises(ValueError, match="not a known module file.*rvm bytecode executable"):
        runtime_load_module(other)


def test_export_library_accepts_tvm_options(rich_executable, tmp_path):
    """TVM's fcompile=/workspace_dir=/options are accepted; the file is still one .rvm file."""
    def create_shared(output, objects, options=None):  # the shape of TVM's cc.create_shared
        raise AssertionError("not called: the executable is not a shared library")

    path = tmp_path / "m.so"
    rich_executable.export_library(path, fcompile=create_shared, workspace_dir=str(tmp_path),
                                   options=["-O2"])
    assert Executable.load(path).as_text() == rich_executable.as_text()
    with pytest.raises(TypeError, match="fcompile must be callable"):
        rich_executable.export_library(path, fcompile="gcc")
