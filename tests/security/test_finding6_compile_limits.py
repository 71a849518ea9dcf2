"""Finding 6: every compile of untrusted code (kernels regenerated from a file's TIR, C
loaded with trust_native=True) runs under an address-space limit, a CPU-time limit and a
source-size limit, each refused with a named error; four nested loops unrolled 64 times
once grew cc1 to 5.3 GB. A cache hit still compiles nothing."""
import numpy as np
import pytest

import rvm
from rvm import relax, tir
from rvm.runtime import compiler as compiler_mod, csource_module, kernel_library
from rvm.runtime.compiler import CompileLimits, Compiler
from rvm.bytecode.errors import ExecutableFormatError
from rvm.codegen.c import load as c_load
from rvm.tir import Var
from rvm.tir.analysis import verify_untrusted as verify_untrusted_mod
from rvm.tir.stmt import BufferStore, For, ForKind
from tests.e2e.test_safe_loading import AddOne
from tests.security.attack import with_kernels

# The loader reports a module's CompileLimitError inside its own error, text kept.
LOAD_ERRORS = (compiler_mod.CompileLimitError, ExecutableFormatError)
LIMIT = "untrusted code (?:exceeded its|has [0-9]+ bytes, more than the compile limit).*"
# Each macro level repeats its argument 4 times: 4**16 tokens for the preprocessor and cc1.
MACRO_BOMB = ("#define A(x) x x x x\n#define B(x) A(A(A(A(x))))\n#define C(x) B(B(x))\n"
              "int rvm_bomb(int y) { return 0 C(C(+y)); }\n")
# Four nested loops unrolled 64 times each: cc1 works for minutes (and grows for gigabytes).
UNROLL_BOMB = ("float rvm_bomb(float* y, const float* x) {\n" + "".join(
    f"#pragma GCC unroll 64\nfor (int {v} = 0; {v} < 64; ++{v})\n" for v in "ijkl")
    + "y[(i + j + k + l) % 8] = y[0] * x[(i * 3 + j + k * 5 + l) % 8] + 1.0f;\nreturn y[1];\n}\n")


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("finding6") / "add_one.rvm"
    relax.build(AddOne, target="c").export_library(str(path))
    return path.read_bytes()


@pytest.fixture
def limited(monkeypatch, tmp_path):
    """A fresh default compiler (empty cache) whose limits a test sets. The untrusted-TIR
    verifier's unroll cap is lifted, so the compile limits are what stops the bombs here
    (tests/security/test_finding6_nested_unroll.py attacks the cap itself)."""
    cc = Compiler(cache_dir=tmp_path / "cache")
    for module in (compiler_mod, kernel_library, csource_module, c_load):
        monkeypatch.setattr(module, "default_compiler", lambda: cc)
    monkeypatch.setattr(verify_untrusted_mod, "MAX_UNROLL_PRODUCT", 1 << 30)
    return cc


def _unrolled_bomb():
    X = tir.decl_buffer((8,), "float32", name="X")
    Y = tir.decl_buffer((8,), "float32", name="Y")
    loops = [Var(name, "int64") for name in "ijkl"]
    index = loops[0] + loops[1] + loops[2] + loops[3]
    body = BufferStore(Y, Y[tir.const(0, "int64")] * X[tir.floormod(index, 8)]
                       + tir.const(1.0, "float32"), [tir.floormod(index * 3, 8)])
    for var in reversed(loops):
        body = For(var, tir.const(0, "int64"), tir.const(64, "int64"), ForKind.UNROLLED, body)
    return tir.PrimFunc([X, Y], body).with_attr("global_symbol", "add_one")


def test_regenerated_kernels_compile_under_the_memory_limit(saved, tmp_path, limited):
    limited.limits = CompileLimits(memory=400 << 20)
    path = tmp_path / "bomb.rvm"
    path.write_bytes(with_kernels(saved, funcs=[("add_one", _unrolled_bomb())]))
    with pytest.raises(LOAD_ERRORS, match=LIMIT + "memory limit of 400 MiB"):
        rvm.runtime.load_module(str(path))


def test_regenerated_kernels_compile_under_the_cpu_limit(saved, tmp_path, limited):
    limited.limits = CompileLimits(cpu_seconds=1)
    path = tmp_path / "bomb.rvm"
    path.write_bytes(with_kernels(saved, funcs=[("add_one", _unrolled_bomb())]))
    with pytest.raises(LOAD_ERRORS, match=LIMIT + "CPU time limit of 1 s"):
        rvm.runtime.load_module(str(path))


def test_regenerated_kernels_compile_under_the_source_size_limit(saved, tmp_path, limited):
    limited.limits = CompileLimits(source_bytes=1000)
    path = tmp_path / "same.rvm"
    path.write_bytes(saved)
    with pytest.raises(LOAD_ERRORS, match="more than the compile limit of 1000"):
        rvm.runtime.load_module(str(path))
    assert limited.invocations == 0


def _trusted(saved, tmp_path, source):
    path = tmp_path / "native.rvm"
    path.write_bytes(with_kernels(saved, source=source, tir=b""))
    return str(path)


@pytest.mark.parametrize("limit,source,match", [
    (CompileLimits(memory=400 << 20), MACRO_BOMB, "memory limit of 400 MiB"),
    (CompileLimits(cpu_seconds=1), UNROLL_BOMB, "CPU time limit of 1 s"),
    (CompileLimits(source_bytes=100), MACRO_BOMB, "of 100; refusing"),
], ids=["memory", "cpu", "source_size"])
def test_trust_native_c_compiles_under_the_limits(saved, tmp_path, limited, limit, source,
                                                  match):
    limited.limits = limit
    with pytest.raises(LOAD_ERRORS, match=LIMIT + match):
        rvm.runtime.load_module(_trusted(saved, tmp_path, source), trust_native=True)


def test_a_cache_hit_compiles_nothing_and_honest_files_still_load(saved, tmp_path, limited):
    path = tmp_path / "same.rvm"
    path.write_bytes(saved)
    for _ in range(2):
        vm = relax.VirtualMachine(rvm.runtime.load_module(str(path)), rvm.cpu())
        np.testing.assert_array_equal(vm["main"](np.arange(8, dtype="float32")).numpy(),
                                      np.arange(1, 9, dtype="float32"))
    assert limited.invocations == 1
