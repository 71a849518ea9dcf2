"""Finding 8: the VM's limits bound kernels too. A loaded (untrusted) file whose kernel
allocates gigabytes of scratch is refused by memory_limit; a kernel loop of 2^62
iterations stops within a second of step_limit, time_limit or Ctrl-C (SIGINT), on both
engines, and the same VM then runs its next call exactly. So does a vectorized loop of
2^62 iterations enclosing another loop (``#pragma omp simd`` cannot be left, so its
iterations go in strips with a poll between them; the TIR fuzzer found it running on for
seconds after the limits had passed)."""
import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from rvm import relax
from rvm.script import ir as I, relax as R, tir as T
from tests.security.attack import ENGINES, run_untrusted


@I.ir_module
class Hostile:
    @T.prim_func
    def spin(x: T.handle, y: T.handle):
        X = T.match_buffer(x, (8,), "float32")
        Y = T.match_buffer(y, (8,), "float32")
        for i, j in T.grid(T.int64(4611686018427387904), T.int64(8)):  # 2^62 x 8
            with T.block("Y"):
                vi, vj = T.axis.remap("RS", [i, j])
                with T.init():
                    Y[vj] = T.float32(0)
                Y[vj] = Y[vj] + X[vj]

    @T.prim_func
    def spin_simd(x: T.handle, y: T.handle):
        X = T.match_buffer(x, (8,), "float32")
        Y = T.match_buffer(y, (8,), "float32")
        for i in T.vectorized(T.int64(4611686018427387904)):  # 2^62, each over 8
            for j in range(8):
                Y[j] = Y[j] + X[j]

    @T.prim_func
    def scratch(x: T.handle, y: T.handle):
        X = T.match_buffer(x, (8,), "float32")
        Y = T.match_buffer(y, (8,), "float32")
        S = T.alloc_buffer((T.int64(1000000000),), "float32")  # 2.8 GB once compacted
        for i in range(8):
            with T.block("S"):
                vi = T.axis.remap("S", [i])
                S[vi * 100000000] = X[vi]
        for i in range(8):
            with T.block("Y"):
                vi = T.axis.remap("S", [i])
                Y[vi] = S[vi * 100000000] + T.float32(1)

    @T.prim_func
    def add_one(x: T.handle, y: T.handle):
        X = T.match_buffer(x, (8,), "float32")
        Y = T.match_buffer(y, (8,), "float32")
        for i in range(8):
            with T.block("Y"):
                vi = T.axis.remap("S", [i])
                Y[vi] = X[vi] + T.float32(1)

    @R.function
    def main(x: R.Tensor((8,), "float32")):
        cls = Hostile
        with R.dataflow():
            y = R.call_tir(cls.spin, (x,), out_sinfo=R.Tensor((8,), "float32"))
            R.output(y)
        return y

    @R.function
    def simd(x: R.Tensor((8,), "float32")):
        cls = Hostile
        with R.dataflow():
            y = R.call_tir(cls.spin_simd, (x,), out_sinfo=R.Tensor((8,), "float32"))
            R.output(y)
        return y

    @R.function
    def big(x: R.Tensor((8,), "float32")):
        cls = Hostile
        with R.dataflow():
            y = R.call_tir(cls.scratch, (x,), out_sinfo=R.Tensor((8,), "float32"))
            R.output(y)
        return y

    @R.function
    def honest(x: R.Tensor((8,), "float32")):
        cls = Hostile
        with R.dataflow():
            y = R.call_tir(cls.add_one, (x,), out_sinfo=R.Tensor((8,), "float32"))
            R.output(y)
        return y


X = np.arange(8, dtype="float32")


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("finding8") / "hostile.rvm"
    relax.build(Hostile, target="c").export_library(str(path))
    return path


@pytest.mark.parametrize("engine", ENGINES)
def test_a_kernels_gigabytes_of_scratch_are_refused_by_memory_limit(saved, engine):
    result = run_untrusted(saved, [X], engine=engine, func="big",
                           limits={"memory_limit": 1 << 20})
    assert result.returncode == 4, result.stdout + result.stderr
    found = re.search(r"RUN-ERROR MemoryError scratch: (\d+) more bytes would exceed the VM's "
                      r"memory_limit of 1048576 bytes", result.stdout)
    assert found and int(found.group(1)) > 10**9, result.stdout  # gigabytes, refused


SPINS = [("main", "spin"), ("simd", "spin_simd")]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("func,kernel", SPINS)
def test_a_kernel_loop_of_2_62_iterations_stops_at_the_step_limit(saved, engine, func, kernel):
    start = time.perf_counter()
    result = run_untrusted(saved, [X], engine=engine, func=func, limits={"step_limit": 100})
    assert result.returncode == 4, result.stdout + result.stderr
    assert "RUN-ERROR RuntimeError VM run exceeded its step_limit of 100 steps in kernel " \
           f"'{kernel}'" in result.stdout
    assert time.perf_counter() - start < 30  # the subprocess, its imports and the compile


# Loads the file untrusted, runs FUNC (an endless kernel) under LIMITS, reports how it
# stopped and how long it took, then runs 'honest' on the same VM.
_RUNNER = textwrap.dedent("""
    import sys, time, numpy as np, rvm
    from rvm import relax
    ex = rvm.runtime.load_module(sys.argv[1])
    vm = relax.VirtualMachine(ex, rvm.cpu(), engine=sys.argv[2], **LIMITS)
    x = np.arange(8, dtype="float32")
    print("HONEST", vm["honest"](x).numpy().tolist(), flush=True)
    print("READY", flush=True)
    start = time.perf_counter()
    try:
        vm[sys.argv[3]](x)
        print("FINISHED")
    except KeyboardInterrupt as err:
        print("STOPPED KeyboardInterrupt", repr(str(err)), time.perf_counter() - start)
    except Exception as err:
        print("STOPPED", type(err).__name__, repr(str(err)), time.perf_counter() - start)
    print("AGAIN", vm["honest"](x + 1).numpy().tolist(), vm.memory_stats()[0]["vm_bytes_in_use"],
          flush=True)
""")


def _start(saved, engine, limits, func="main"):
    code = "LIMITS = " + repr(limits) + "\n" + _RUNNER
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    # Ctrl-C as in a terminal: a process started with SIGINT ignored (a background job of a
    # non-interactive shell, nohup) keeps it ignored, and Python then installs no handler.
    proc = subprocess.Popen([sys.executable, "-c", code, str(saved), engine, func],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines = []
    while True:
        line = proc.stdout.readline()
        assert line, "".join(lines) + proc.stderr.read()
        lines.append(line)
        if line.startswith("READY"):
            return proc, lines


def _finish(proc, lines, timeout=10):
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail("the kernel did not stop: " + "".join(lines) + out + err)
    text = "".join(lines) + out
    assert proc.returncode == 0, text + err
    assert "HONEST [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]" in text
    assert "AGAIN [2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0] 64" in text  # exact, nothing kept
    return next(line for line in text.splitlines() if line.startswith("STOPPED")).split()


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("func,kernel", SPINS)
def test_a_kernel_loop_stops_within_a_second_of_the_time_limit(saved, engine, func, kernel):
    proc, lines = _start(saved, engine, {"time_limit": 0.5}, func)
    stopped = _finish(proc, lines)
    assert stopped[1] == "TimeoutError" and f"time_limit of 0.5 s (in kernel '{kernel}')" in \
        " ".join(stopped)
    assert 0.5 <= float(stopped[-1]) < 1.5


@pytest.mark.parametrize("engine", ENGINES)
def test_the_time_limit_stops_a_kernel_on_a_loaded_machine(saved, engine):
    """Under the fuzz campaign's limits (step_limit 10^6 beside the time limit) and a
    CPU-bound competitor, the kernel stops at the time limit, which counts wall-clock
    seconds: within a second of it however little CPU the run got."""
    competitor = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        proc, lines = _start(saved, engine, {"time_limit": 0.5, "step_limit": 10**6})
        stopped = _finish(proc, lines)
    finally:
        competitor.kill()
        competitor.wait()
    assert stopped[1] == "TimeoutError" and "time_limit of 0.5 s (in kernel 'spin')" in \
        " ".join(stopped)
    assert 0.5 <= float(stopped[-1]) < 1.5


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("func", [func for func, _ in SPINS])
def test_sigint_stops_a_running_kernel_within_a_second(saved, engine, func):
    proc, lines = _start(saved, engine, {}, func)
    time.sleep(0.5)  # the kernel runs (without the GIL on the native engine)
    assert proc.poll() is None
    sent = time.perf_counter()
    proc.send_signal(signal.SIGINT)
    stopped = _finish(proc, lines)
    assert time.perf_counter() - sent < 1.0
    assert stopped[1] == "KeyboardInterrupt", stopped
