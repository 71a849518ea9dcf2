"""VM call overhead of both engines (python, native): µs per call of an identity function,
ns per instruction of a chain of 10 calls to a no-op kernel, and what profiling adds.

    python benchmarks/bench_vm.py

Baselines: a plain Python function call measured in the same run, and Apache
TVM's Relax VM on this machine (identity 0.72 µs per call from Python, 0.36 µs
per added call_tir), figures recorded beforehand since TVM is not installed.
The no-op kernel takes (x, out) NDArrays in destination-passing style, once as
a Python function and once compiled from C. What profiling adds: the chain of
C calls run while a profile is on (every call site timed; the worst case, each
callee doing nothing), against the same chain unprofiled; and ``vm.profile()``
of seed 004's MLP at batch 1 (a call of about 10 us) against a plain call.
"""
import pathlib
import statistics
import subprocess
import sys
import tempfile
import timeit

import numpy as np

import rvm
from bench_e2e import mlp_module, mlp_params
from rvm.bytecode.builder import ExecBuilder
from rvm.driver.relax_build import build
from rvm.runtime.device import cpu
from rvm.runtime.library import load_library
from rvm.runtime.ndarray import array
from rvm.runtime.packed_func import register_func
from rvm.vm.machine import ENGINES, VirtualMachine

ROOT = pathlib.Path(__file__).resolve().parents[1]
TVM_IDENTITY_US = 0.72
TVM_PER_CALL_US = 0.36
CHAIN = 10
NUMBER = 20_000
REPEAT = 15

C_NOOP = r"""
#include "rvm/c_runtime_api.h"
static int Noop(RVMValue* args, int* codes, int n, RVMValue* ret, int* ret_code, void* res) {
  return 0;
}
RVM_REGISTER_GLOBAL("bench.c_noop", Noop);
"""


def build_c_noop(out_dir):
    src = pathlib.Path(out_dir) / "noop.c"
    src.write_text(C_NOOP)
    lib = pathlib.Path(out_dir) / "libnoop.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", f"-I{ROOT / 'native' / 'include'}",
                    str(src), "-o", str(lib)], check=True)
    load_library(str(lib))


def build_executable():
    ib = ExecBuilder()
    with ib.function("identity", num_inputs=1):
        ib.emit_ret(ib.r(0))
    for kernel in ("bench.py_noop", "bench.c_noop"):
        with ib.function(f"chain_{kernel.split('.')[1]}", num_inputs=2):
            for _ in range(CHAIN):
                ib.emit_call(kernel, args=[ib.r(0), ib.r(1)])
            ib.emit_ret(ib.r(1))
    return ib.get()


def median_us(fn, *args, number=NUMBER):
    times = timeit.repeat(lambda: fn(*args), number=number, repeat=REPEAT)
    return statistics.median(times) / number * 1e6


def median_profiled_us(vm, name, *args):
    """(us per call of ``name`` while a profile is on, us per call without), measured in
    alternation (what profiling adds to a call)."""
    native, fn = vm._native, vm[name]
    profiled, plain = [], []
    for _ in range(REPEAT):
        if native is not None:
            native.start_profile()
        else:
            vm.profile_samples = {}
        profiled.append(timeit.timeit(lambda: fn(*args), number=NUMBER // 4))
        if native is not None:
            native.stop_profile()
        vm.profile_samples = None
        plain.append(timeit.timeit(lambda: fn(*args), number=NUMBER // 4))
    return statistics.median(profiled), statistics.median(plain)


def mlp_profile_ratio(engine):
    """us of ``vm.profile("main", x)`` / us of ``vm["main"](x)`` for the MLP at batch 1,
    medians measured in alternation."""
    params = {k: rvm.nd.array(v) for k, v in mlp_params().items()}
    vm = VirtualMachine(build(mlp_module(1), target="c", params=params), cpu(), engine=engine)
    x = rvm.nd.array(np.random.default_rng(0).random((1, 784), dtype=np.float32))
    main, number = vm["main"], NUMBER // 20
    profiled, plain = [], []
    for _ in range(REPEAT):
        profiled.append(timeit.timeit(lambda: vm.profile("main", x), number=number))
        plain.append(timeit.timeit(lambda: main(x), number=number))
    return statistics.median(profiled) / statistics.median(plain)


def main():
    def py_noop(x, out):
        pass

    register_func("bench.py_noop", py_noop, override=True)
    with tempfile.TemporaryDirectory() as tmp:
        build_c_noop(tmp)
    ex = build_executable()
    x, out = array(np.zeros(4, "float32")), array(np.zeros(4, "float32"))

    def plain_identity(a):
        return a

    def plain_chain(a, b):
        for _ in range(CHAIN):
            py_noop(a, b)
        return b

    plain_us = median_us(plain_identity, x)
    per_plain = (median_us(plain_chain, x, out) - plain_us) / CHAIN
    figures, profiled = {}, {}
    for engine in ENGINES:
        vm = VirtualMachine(ex, cpu(), engine=engine)
        vm_us = median_us(vm["identity"], x)
        per_py = (median_us(vm["chain_py_noop"], x, out) - vm_us) / CHAIN
        chain_c = median_us(vm["chain_c_noop"], x, out)
        per_c = (chain_c - vm_us) / CHAIN
        figures[engine] = (vm_us, per_py * 1e3, per_c * 1e3)
        profiled[engine] = median_profiled_us(vm, "chain_c_noop", x, out)
    mlp = {engine: mlp_profile_ratio(engine) for engine in ENGINES}

    print(f"python {sys.version.split()[0]}; median of {REPEAT} repeats x {NUMBER} calls")
    print(f"{'measure':44s} {'python':>8s} {'native':>8s} {'TVM':>8s} {'native x TVM':>13s} "
          f"{'native x plain':>15s}")
    rows = [("identity, us per call from Python", TVM_IDENTITY_US, plain_us),
            ("no-op kernel (Python), ns per instruction", TVM_PER_CALL_US * 1e3,
             per_plain * 1e3),
            ("no-op kernel (C), ns per instruction", TVM_PER_CALL_US * 1e3, per_plain * 1e3)]
    for k, (name, tvm, plain) in enumerate(rows):
        py, native = figures["python"][k], figures["native"][k]
        print(f"{name:44s} {py:8.2f} {native:8.2f} {tvm:8.2f} {native / tvm:13.2f} "
              f"{native / plain:15.2f}")
    py, native = (profiled[e][0] / profiled[e][1] for e in ("python", "native"))
    print(f"{'chain of C calls profiled, x unprofiled':44s} {py:8.2f} {native:8.2f}")
    print(f"{'MLP batch 1: profile(), x plain call':44s} {mlp['python']:8.2f} "
          f"{mlp['native']:8.2f}")
    print(f"{'plain Python: identity call, us':44s} {plain_us:8.3f}")
    print(f"{'plain Python: no-op call in a loop, ns per call':44s} {per_plain * 1e3:8.1f}")


if __name__ == "__main__":
    main()
