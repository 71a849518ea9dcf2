"""Executables are untrusted: their kernels are regenerated from TIR, never from stored C.

Each test edits the kernel library inside a saved executable (fixing the
checksums), then loads and runs it.
"""
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.bytecode.serialize import dump_executable, undump_executable
from rvm.codegen.c import load as c_load
from rvm.runtime import compiler as compiler_mod
from rvm.runtime import kernel_library
from rvm.runtime import module as module_mod
from rvm.script import ir as I, relax as R, tir as T
from rvm.tir import stmt as S
from rvm.tir.serialize import load_prim_funcs, save_prim_funcs
from rvm.tir.stmt_functor import StmtExprMutator
from tests.security.attack import join_kernel_library, split_kernel_library


@I.ir_module
class AddOne:
    @T.prim_func
    def add_one(x: T.handle, y: T.handle):
        X = T.match_buffer(x, (8,), "float32")
        Y = T.match_buffer(y, (8,), "float32")
        for i in T.grid(8):
            with T.block("Y"):
                vi = T.axis.remap("S", [i])
                Y[vi] = X[vi] + T.float32(1)

    @R.function
    def main(x: R.Tensor((8,), "float32")):
        cls = AddOne
        with R.dataflow():
            y = R.call_tir(cls.add_one, (x,), out_sinfo=R.Tensor((8,), "float32"))
            R.output(y)
        return y


X = np.arange(8, dtype="float32")


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("safe") / "add_one.rvm"
    relax.build(AddOne, target="c").export_library(str(path))
    return path.read_bytes()


def edit_kernels(data, tmp_path, source=None, functions=None, tir=None, has_tir=None):
    """A copy of the executable ``data`` with its kernel library's parts replaced."""
    parts = undump_executable(data, "test")
    modules = []
    for role, key, blob in parts["modules"]:
        if key == "c_kernels":
            head, src, old_tir, obj = split_kernel_library(blob)
            header = json.loads(head)
            if functions is not None:
                header["functions"] = functions
            if has_tir is not None:
                header["tir"] = has_tir
            blob = join_kernel_library([json.dumps(header).encode(), (source or src.decode()).encode(),
                          old_tir if tir is None else tir, obj])
        modules.append((role, key, blob))
    parts["modules"] = modules
    path = tmp_path / "edited.rvm"
    path.write_bytes(dump_executable(parts))
    return path


def run(path, **load):
    ex = rvm.runtime.load_module(str(path), **load)
    return relax.VirtualMachine(ex, rvm.cpu())["main"](X).numpy()


def _hostile_sources(marker):
    touch = f'system("touch {marker}");'
    kernel = "int rvm_kernel_add_one(void* a, int* t, int n, void* r, int* rc, void* s)"
    return {
        "system call": f"#include <stdlib.h>\n{kernel} {{ {touch} return 0; }}\n",
        "out-of-bounds write": f"{kernel} {{ ((volatile char*)a)[1L << 40] = 1; return 0; }}\n",
        "constructor": "#include <stdlib.h>\n__attribute__((constructor)) static void e(void) "
                       f"{{ {touch} }}\n{kernel} {{ return 0; }}\n",
        "init_array in a string": "#include <stdlib.h>\nstatic void e(void) { " + touch + " }\n"
                                  '__attribute__((used, section(".init_" "array"))) static void'
                                  f" (*p)(void) = e;\n{kernel} {{ return 0; }}\n",
        "token pasting": "#include <stdlib.h>\n#define CAT(a, b) a##b\n__attribute__((CAT(con, "
                         f"structor))) static void e(void) {{ {touch} }}\n{kernel} {{ return 0; }}\n",
        "ifunc resolver": "#include <stdlib.h>\nstatic void* resolve(void) { " + touch
                          + " return 0; }\n" + kernel.replace("int rvm_kernel_add_one",
                                                              "int rvm_kernel_add_one")
                          + ' __attribute__((ifunc("resolve")));\n',
        "inline asm": f'{kernel} {{ __asm("ud2"); return 0; }}\n',
        "include of a local file": '#include "/etc/passwd"\n',
        "include of stdin": '#include "/dev/stdin"\n',
    }


@pytest.mark.parametrize("name", list(_hostile_sources("m")))
def test_hostile_stored_c_never_runs(saved, tmp_path, name):
    marker = tmp_path / "ran"
    path = edit_kernels(saved, tmp_path, source=_hostile_sources(marker)[name])
    np.testing.assert_allclose(run(path), X + 1)  # the honest kernel, from the TIR
    assert not marker.exists()


def test_header_mapping_a_kernel_to_another_symbol_is_refused(saved, tmp_path):
    path = edit_kernels(saved, tmp_path, functions={"add_one": "system"})
    with pytest.raises(ValueError, match="header maps 'add_one' -> 'system'.*refusing"):
        rvm.runtime.load_module(str(path))
    with pytest.raises(ValueError, match="symbols it does not define: 'add_one' -> 'system'"):
        rvm.runtime.load_module(str(path), trust_native=True)


class _Edit(StmtExprMutator):
    def __init__(self, fn):
        self.fn = fn

    def visit_buffer_store_(self, op):
        return self.fn(op)


def _edited_tir(saved, fn):
    blob = next(b for _, k, b in undump_executable(saved, "t")["modules"] if k == "c_kernels")
    (name, func), = load_prim_funcs(split_kernel_library(blob)[2])
    return save_prim_funcs([(name, func.with_body(_Edit(fn).visit(func.body)))])


def test_tir_indexing_out_of_bounds_is_guarded(saved, tmp_path):
    def shift(op):
        return op.with_fields(indices=(op.indices[0] + 1000,))
    path = edit_kernels(saved, tmp_path, tir=_edited_tir(saved, shift))
    with pytest.raises(IndexError, match="add_one: an index of buffer 'Y' is out of bounds"):
        run(path)


def test_tir_forging_a_pointer_is_refused(saved, tmp_path):
    def forge(op):
        fake = rvm.tir.Var("p", "handle")
        buf = rvm.tir.decl_buffer((8,), "float32", name="Z", data=fake)
        return S.LetStmt(fake, rvm.tir.Cast("handle", rvm.tir.const(4096, "int64")),
                         S.BufferStore(buf, op.value, op.indices))
    path = edit_kernels(saved, tmp_path, tir=_edited_tir(saved, forge))
    # Refused before codegen: an integer cast to a pointer is not numeric.
    with pytest.raises(ValueError, match="UntrustedTIRError: kernel 'add_one': numeric-value: "
                       "cast from int64 to handle"):
        rvm.runtime.load_module(str(path))


def test_tir_calling_extern_code_is_refused(saved, tmp_path):
    def call(op):
        return S.Evaluate(rvm.tir.call_extern("int32", "system", rvm.tir.StringImm("true")))
    path = edit_kernels(saved, tmp_path, tir=_edited_tir(saved, call))
    with pytest.raises(ValueError, match="call_extern of .*system.* is refused"):
        rvm.runtime.load_module(str(path))


def test_malformed_tir_is_a_load_error(saved, tmp_path):
    path = edit_kernels(saved, tmp_path, tir=b"\x93garbage")
    with pytest.raises(ValueError, match="cannot regenerate its kernels .*TIRFormatError"):
        rvm.runtime.load_module(str(path))


def test_hand_written_c_needs_trust_native(saved, tmp_path):
    path = edit_kernels(saved, tmp_path, tir=b"", has_tir=False)
    with pytest.raises(ValueError, match=r"\(add_one\) holds hand-written C .*trust_native=True"):
        rvm.runtime.load_module(str(path))
    np.testing.assert_allclose(run(path, trust_native=True), X + 1)


def test_runtime_only_install_refuses(saved, tmp_path, monkeypatch):
    def absent(tir, compiler):
        raise ImportError("No module named 'rvm.codegen'")
    # Without the compiler side's loader, and with it when the code generator is missing.
    monkeypatch.setitem(module_mod._LOADERS, "c_kernels",
                        (kernel_library.load_kernel_library, True))
    with pytest.raises(ValueError, match="only by rvm's compiler .*lacks.*trust_native=True"):
        rvm.runtime.load_module(str(edit_kernels(saved, tmp_path)))
    monkeypatch.setitem(module_mod._LOADERS, "c_kernels", (c_load.load_c_kernels, True))
    monkeypatch.setattr(c_load, "_regenerate", absent)
    with pytest.raises(ValueError, match="only by rvm's compiler .*lacks.*trust_native=True"):
        rvm.runtime.load_module(str(edit_kernels(saved, tmp_path)))


def test_import_rvm_registers_the_regenerating_loader_once():
    # A fresh interpreter: the runtime's kernel loader is replaced by the compiler side's,
    # registered by the top-level package without importing the code generator.
    code = ("import sys, rvm; from rvm.runtime import module as m; "
            "loader, trust = m._LOADERS['c_kernels']; "
            "print(loader.__module__, trust, 'rvm.codegen.c.target' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=str(pathlib.Path(__file__).resolve().parents[2]))
    assert out.stdout.split() == ["rvm.codegen.c.load", "True", "False"]


def test_trusted_c_errors_never_echo_included_files(saved, tmp_path):
    path = edit_kernels(saved, tmp_path, source='#include "/etc/passwd"\n', tir=b"",
                        has_tir=False)
    with pytest.raises(ValueError, match="C compilation failed") as info:
        rvm.runtime.load_module(str(path), trust_native=True)
    assert "root:" not in str(info.value)


def test_trusted_c_compiles_under_a_time_limit(saved, tmp_path, monkeypatch):
    monkeypatch.setattr(compiler_mod.default_compiler(), "limits",
                        compiler_mod.CompileLimits(seconds=2))
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # opening it blocks forever: nobody writes
    path = edit_kernels(saved, tmp_path, source=f'#include "{fifo}"\n', tir=b"",
                        has_tir=False)
    with pytest.raises(ValueError, match="timed out after 2 s"):
        rvm.runtime.load_module(str(path), trust_native=True)
    path = edit_kernels(saved, tmp_path, source='#include "/dev/stdin"\n', tir=b"",
                        has_tir=False)
    with pytest.raises(ValueError, match="kernel library lacks the symbols|C compilation"):
        rvm.runtime.load_module(str(path), trust_native=True)
