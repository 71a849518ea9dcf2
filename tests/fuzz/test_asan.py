"""The ASan environment of a fuzz child compiles untrusted kernels: the compiler, run under
rvm's address-space limit, must not inherit the preloaded libasan (which cannot reserve
its shadow memory under that limit and aborts before compiling anything), and the
wrapper compiles instrumented code at -O1."""
import os
import pathlib
import subprocess
import sys

import pytest

from fuzz.asan import asan_env, libasan

ROOT = pathlib.Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(libasan() is None, reason="gcc has no libasan")

_CHILD = """
import sys
from fuzz.asan import started_under_asan
from rvm.runtime.compiler import CompileError, default_compiler
if sys.argv[1] == "drop":
    assert started_under_asan()
try:
    lib = default_compiler().compile("int rvm_probe_add(int x) { return x + 1; }",
                                     use_openmp=False, untrusted=True)
except CompileError as err:
    print("failed:", str(err).splitlines()[0])
else:
    import ctypes
    print("compiled:", ctypes.CDLL(str(lib.path)).rvm_probe_add(41))
"""


def _compile_in_asan_child(tmp_path, mode):
    env = dict(os.environ, PYTHONPATH=str(ROOT), RVM_CACHE_DIR=str(tmp_path / "cache"),
               **asan_env(str(tmp_path), 2048))
    out = subprocess.run([sys.executable, "-c", _CHILD, mode], capture_output=True,
                         text=True, timeout=300, cwd=ROOT, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip()


def test_an_asan_child_compiles_untrusted_kernels(tmp_path):
    assert _compile_in_asan_child(tmp_path, "drop") == "compiled: 42"


def test_the_compiler_inheriting_libasan_fails_under_the_compile_limit(tmp_path):
    # what started_under_asan prevents: every untrusted compile of the child failed
    assert _compile_in_asan_child(tmp_path, "keep").startswith("failed: C compilation failed")


def test_the_wrapper_instruments_at_O1_after_rvms_flags(tmp_path):
    wrapper = pathlib.Path(asan_env(str(tmp_path), 2048)["RVM_CC"]).read_text()
    line = [t for t in wrapper.splitlines() if t.startswith("exec ")][0]
    assert line.endswith('"$@" -fsanitize=address -fno-omit-frame-pointer -O1'), line
