"""Finding 3: a buffer passed to a packed function from a kernel was checked by element
count only, so a float64 buffer declared over a float32 tensor's memory passed twice the
tensor's bytes: ``relax.run.assert_op`` printed 32 bytes past the tensor and a registered
Python function could write past it.

The kernels here are written in the test, built, exported and loaded back as untrusted
files (their C regenerated from the stored TIR); both engines run them in a subprocess.
Two defences now stop it. Loading refuses the TIR (the untrusted-TIR verifier's
``buffer-type`` rule: one dtype per memory), so the files below never run untrusted. And a
buffer passed on must fit its memory in bytes (element count x dtype size), checked in
overflow-safe arithmetic, and views made in the runtime never exceed their memory: that
check is exercised by running the same files' own stored C (``trust_native=True``), which
is what the kernels built in-process run."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from rvm import relax
from rvm.script import ir as I, relax as R, tir as T  # noqa: E741
from tests.security.attack import ENGINES, run_untrusted

X = np.arange(8, dtype="float32")


def _module(kernel):
    @I.ir_module
    class Mod:
        @T.prim_func
        def kern(x: T.handle, y: T.handle):  # replaced below by the kernel under test
            X_ = T.match_buffer(x, (8,), "float32")
            Y = T.match_buffer(y, (8,), "float32")
            for i in range(8):
                Y[i] = X_[i]

        @R.function
        def main(x: R.Tensor((8,), "float32")):
            with R.dataflow():
                y = R.call_tir(Mod.kern, (x,), out_sinfo=R.Tensor((8,), "float32"))
                R.output(y)
            return y
    Mod["kern"] = kernel
    return Mod


@T.prim_func
def assert_on_float64_view(x: T.handle, y: T.handle):
    X_ = T.match_buffer(x, (8,), "float32")
    Y = T.match_buffer(y, (8,), "float32")
    XD = T.decl_buffer((8,), "float64", data=X_.data)
    for i in range(8):
        Y[i] = X_[i]
    T.evaluate(T.call_packed("relax.run.assert_op", T.bool(False), "view: {}", XD))


@T.prim_func
def callee_on_float64_view(x: T.handle, y: T.handle):
    X_ = T.match_buffer(x, (8,), "float32")
    Y = T.match_buffer(y, (8,), "float32")
    XD = T.decl_buffer((8,), "float64", data=X_.data)
    for i in range(8):
        Y[i] = X_[i]
    T.evaluate(T.call_packed("env.peek", XD))


@T.prim_func
def callee_on_huge_view(x: T.handle, y: T.handle):
    X_ = T.match_buffer(x, (8,), "float32")
    Y = T.match_buffer(y, (8,), "float32")
    # 2^31 * 2^31 elements of 4 bytes: 2^64 bytes, which wraps to 0 in int64
    XH = T.decl_buffer((T.int64(2147483648), T.int64(2147483648)), "float32", data=X_.data)
    for i in range(8):
        Y[i] = X_[i]
    T.evaluate(T.call_packed("env.peek", XH))


@T.prim_func
def callee_on_fitting_view(x: T.handle, y: T.handle):
    X_ = T.match_buffer(x, (8,), "float32")
    Y = T.match_buffer(y, (8,), "float32")
    XD = T.decl_buffer((4,), "float64", data=X_.data)  # the same 32 bytes, reinterpreted
    for i in range(8):
        Y[i] = X_[i]
    T.evaluate(T.call_packed("env.peek", XD))


def _saved(tmp_path, kernel, name):
    path = tmp_path / f"{name}.rvm"
    relax.build(_module(kernel), target="c").export_library(str(path))
    return path


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("kernel", [assert_on_float64_view, callee_on_float64_view],
                         ids=["assert", "float64"])
def test_a_file_viewing_memory_as_another_dtype_is_refused_at_load(tmp_path, engine, kernel):
    result = run_untrusted(_saved(tmp_path, kernel, "view"), [X], engine=engine)
    assert result.returncode == 3, result.stdout + result.stderr
    assert "UntrustedTIRError" in result.stdout and "buffer-type" in result.stdout
    assert "view:" not in result.stdout


@pytest.mark.parametrize("engine", ENGINES)
def test_assert_op_never_prints_past_the_tensor(tmp_path, engine):
    result = _run_with_callee(_saved(tmp_path, assert_on_float64_view, "assert"), engine)
    assert result.returncode == 4, result.stdout + result.stderr
    assert "RUN-ERROR" in result.stdout and "AssertionError" not in result.stdout
    assert "buffer 'XD' passed to a packed function (float64 x 1-d shape) is larger than " \
        "its memory" in result.stdout
    assert "view:" not in result.stdout


_RUNNER = textwrap.dedent("""
    import sys, numpy as np, rvm
    from rvm import relax

    @rvm.register_func("env.peek")
    def peek(t):  # what a Python callee can reach: it would write every byte it is given
        print("CALLED", t.dtype, tuple(t.shape), t.nbytes, flush=True)
        view = np.from_dlpack(t)
        view[...] = 0

    path, engine, trust = sys.argv[1], sys.argv[2], sys.argv[3] == "trust"
    ex = rvm.runtime.load_module(path, trust_native=trust)  # trust: the file's own stored C
    try:
        out = relax.VirtualMachine(ex, rvm.cpu(), engine=engine)["main"](
            np.arange(8, dtype="float32"))
    except Exception as err:
        print("RUN-ERROR", type(err).__name__, err)
        sys.exit(4)
    print("RAN", out.numpy().tolist())
""")
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run_with_callee(path, engine, trust=True):
    env = dict(os.environ, PYTHONPATH=_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", _RUNNER, str(path), engine,
                           "trust" if trust else "no"],
                          capture_output=True, text=True, timeout=120, env=env)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("kernel, name", [(callee_on_float64_view, "XD"),
                                          (callee_on_huge_view, "XH")], ids=["float64", "wrap"])
def test_a_python_callee_never_receives_more_than_the_memory(tmp_path, engine, kernel, name):
    result = _run_with_callee(_saved(tmp_path, kernel, name), engine)
    assert result.returncode == 4, result.stdout + result.stderr
    assert "CALLED" not in result.stdout
    assert f"buffer '{name}' passed to a packed function" in result.stdout
    assert "is larger than its memory" in result.stdout


@pytest.mark.parametrize("engine", ENGINES)
def test_an_untrusted_view_whose_size_wraps_is_stopped_at_the_call(tmp_path, engine):
    """One dtype, so the verifier lets it through: the regenerated kernel's byte check,
    in overflow-safe arithmetic, stops it."""
    result = _run_with_callee(_saved(tmp_path, callee_on_huge_view, "XH"), engine, trust=False)
    assert result.returncode == 4, result.stdout + result.stderr
    assert "CALLED" not in result.stdout
    assert "buffer 'XH' passed to a packed function" in result.stdout
    assert "is larger than its memory" in result.stdout


@pytest.mark.parametrize("engine", ENGINES)
def test_a_reinterpreting_view_of_the_same_bytes_still_works(tmp_path, engine):
    result = _run_with_callee(_saved(tmp_path, callee_on_fitting_view, "fits"), engine)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "CALLED float64 (4,) 32" in result.stdout
    assert "RAN [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]" in result.stdout
