"""Packed-call overhead: ns per call, as ratios to a plain Python call measured in the same run.

    python benchmarks/bench_packed_call.py

Rows: a plain Python call (the base), Python -> Python packed call, Python -> C
packed call (a no-op C function taking 3 ints), and C -> Python callback.
"""
import pathlib
import statistics
import subprocess
import sys
import tempfile
import timeit

import rvm
from rvm.runtime.packed_func import PackedFunc

ROOT = pathlib.Path(__file__).resolve().parents[1]
NUMBER = 200_000
REPEAT = 15


def build_extension(out_dir):
    out = pathlib.Path(out_dir) / "libext.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", f"-I{ROOT / 'native' / 'include'}",
                    str(ROOT / "tests" / "runtime" / "ext" / "myext.c"), "-o", str(out)],
                   check=True)
    return out


def median_ns(stmt, setup_globals, number=NUMBER):
    times = timeit.repeat(stmt, globals=setup_globals, number=number, repeat=REPEAT)
    return statistics.median(times) / number * 1e9


def main():
    with tempfile.TemporaryDirectory() as tmp:
        rvm.runtime.load_library(build_extension(tmp))

    def plain(a, b, c):
        pass

    py_packed = PackedFunc(plain)
    c_noop = rvm.get_global_func("ext.noop3")
    call_n = rvm.get_global_func("ext.call_n")

    def callback(i):
        pass

    cb = PackedFunc(callback)
    env = {"plain": plain, "py_packed": py_packed, "c_noop": c_noop, "call_n": call_n, "cb": cb}
    rows = [
        ("plain Python call f(1, 2, 3)", median_ns("plain(1, 2, 3)", env)),
        ("Python -> Python packed call", median_ns("py_packed(1, 2, 3)", env)),
        ("Python -> C packed call (no-op, 3 ints)", median_ns("c_noop(1, 2, 3)", env)),
        ("C -> Python callback (1 int)",
         median_ns("call_n(cb, 1000)", env, number=NUMBER // 1000) / 1000),
    ]
    base = rows[0][1]
    print(f"python {sys.version.split()[0]}; median of {REPEAT} repeats")
    print(f"{'call':44s} {'ns/call':>9s} {'x base':>8s}")
    for name, ns in rows:
        print(f"{name:44s} {ns:9.1f} {ns / base:8.2f}")


if __name__ == "__main__":
    main()
