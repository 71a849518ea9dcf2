"""Where the fuzz harness says an input stopped: each load stage on a file built to stop
there, and an undocumented exception inside the loader reported as an internal error."""
import pytest

from fuzz.stages import InternalError, check_run_error, load_stage
from fuzz.tir_graph import TIRGraph, map_refs
from rvm import relax
from rvm.bytecode.executable import Executable
from rvm.bytecode.function import FuncInfo
from rvm.bytecode.serialize import dump_executable, undump_executable
from rvm.codegen.c import load as c_load
from rvm.tir.serialize import save_prim_funcs
from tests.e2e.test_safe_loading import AddOne
from tests.security.attack import join_kernel_library, kernel_tir, split_kernel_library, \
    with_kernels


@pytest.fixture(scope="module")
def saved():
    return relax.build(AddOne, target="c").save_to_bytes()


def _stage(data):
    with pytest.raises(Exception) as info:
        Executable.from_bytes(data)
    return load_stage(info.value)


def test_a_damaged_payload_stops_at_the_checksum(saved):
    data = bytearray(saved)
    data[-3] ^= 0xFF
    assert _stage(bytes(data)) == "rejected_crc"


def test_malformed_tir_stops_at_the_format(saved):
    assert _stage(with_kernels(saved, tir=b"\x93garbage")) == "rejected_format"


def test_a_kernel_source_that_is_not_utf8_stops_at_the_format(saved):
    # the loader turns the UnicodeDecodeError into its own ValueError on purpose
    parts = undump_executable(saved)
    (role, key, blob), = [m for m in parts["modules"] if m[1] == "c_kernels"]
    head, _, tir, obj = split_kernel_library(blob)
    parts["modules"] = [(role, key, join_kernel_library([head, b"\xff\xfe", tir, obj]))]
    assert _stage(dump_executable(parts)) == "rejected_format"


def test_bad_registers_stop_at_the_verifier(saved):
    parts = undump_executable(saved)
    parts["functions"] = [f._replace(num_regs=0) if f.name == "main" else f
                          for f in parts["functions"]]
    assert isinstance(parts["functions"][0], FuncInfo)
    assert _stage(dump_executable(parts)) == "rejected_verifier"


def test_a_narrowing_let_stops_at_the_tir_verifier(saved):
    g = TIRGraph(save_prim_funcs(kernel_tir(saved)))
    store = g.indices("BufferStore")[0]
    index = g.field(store, "indices")[0]
    var = store + 1  # LetStmt t: int8 = <the int64 index>, the store indexed by t
    copy = map_refs(g.nodes[store], lambda r: var if r == index else r, binding=False)
    g.redirect(store, g.insert(var, [["Var", ["t", "int8"]], copy,
                                     ["LetStmt", [var, index, var + 1]]]))
    assert _stage(with_kernels(saved, tir=g.to_bytes())) == "rejected_tir_verifier"


def test_a_call_extern_kernel_is_refused_at_regeneration(saved):
    g = TIRGraph(save_prim_funcs(kernel_tir(saved)))
    c = g.indices("BufferStore")[0]
    g.insert(c, [["StringImm", ["puts"]], ["Call", ["int32", "tir.call_extern", [c]]],
                 ["Evaluate", [c + 1]]])
    g.set_field(len(g.nodes) - 1, "body", c + 2)
    assert _stage(with_kernels(saved, tir=g.to_bytes())) == "rejected_kernel"


def test_an_undocumented_exception_in_the_loader_is_internal(saved, monkeypatch):
    def broken(tir, compiler):
        return {}["no such key"]
    monkeypatch.setattr(c_load, "_regenerate", broken)
    with pytest.raises(InternalError, match="load: KeyError") as info:
        _stage(saved)
    assert "in broken" in info.value.traceback()


def test_run_errors_outside_the_documented_ones_are_internal():
    check_run_error(IndexError("guarded access"), "run")
    check_run_error(MemoryError("memory_limit"), "run")
    check_run_error(AssertionError("Assertion failed"), "run")  # R.assert_op's failure
    with pytest.raises(InternalError, match="run: AttributeError"):
        check_run_error(AttributeError("x"), "run")


def test_a_compile_stopped_at_its_time_limit_is_counted_apart(saved, monkeypatch):
    from rvm.runtime.compiler import Compiler, CompileLimitError

    def slow(self, *args, **kwargs):
        raise CompileLimitError("C compilation timed out after 5 s (cc)")
    monkeypatch.setattr(Compiler, "_compile_in", slow)
    data = bytearray(saved)  # a source not in the kernel cache
    g = TIRGraph(save_prim_funcs(kernel_tir(saved)))
    c = [i for i in g.indices("FloatImm")][0]
    g.nodes[c] = ["FloatImm", [g.field(c, "dtype"), 2.5]]
    assert _stage(with_kernels(bytes(data), tir=g.to_bytes())) == "compile_limit"
    monkeypatch.setattr(Compiler, "_compile_in", lambda self, *a, **k: (_ for _ in ()).throw(
        CompileLimitError("C compilation of untrusted code exceeded its memory limit of 1 MiB")))
    g.nodes[c] = ["FloatImm", [g.field(c, "dtype"), 3.5]]
    assert _stage(with_kernels(bytes(data), tir=g.to_bytes())) == "rejected_kernel"
