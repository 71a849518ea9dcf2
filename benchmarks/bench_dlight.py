"""Default schedules (rvm.dlight) against numpy, both on the same threads, in GFLOPS.

    python benchmarks/bench_dlight.py [--rounds 7] [--threads 2] [--sizes 512,256,1024]

Rows: an n x n x n float32 matmul ``C = A @ B`` (both operands run-time inputs, so the
kernel packs B into panels on every call) written as a TE compute, scheduled by
``DefaultCPUSchedule`` (what ``relax.build`` applies to a kernel without a tuning
record) and built for the c target, and numpy's ``a @ b`` with its BLAS limited to the
same threads (threadpoolctl). Each round measures each side once, alternating, after a
pause; the table gives the median GFLOPS and the range over the rounds, and the ratio
of the medians (issue 26's acceptance 3: rvm >= 0.7x numpy at 512^3 on 2 threads).
"""
import argparse
import statistics
import sys
import time

import numpy as np

import rvm
from rvm import te
from rvm.dlight import CPUInfo, DefaultCPUSchedule
from rvm.driver.build_module import build
from rvm.ir.module import IRModule
from timing import calls_per_sample, seconds_per_call


def matmul(n):
    A, B = te.placeholder((n, n), name="A"), te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return te.create_prim_func([A, B, C]).with_attr("global_symbol", "matmul")


def measure(runs, rounds, sample_time=0.1, settle=0.2):
    """{name: [seconds per call, one per round]}, the callables alternating in each round."""
    numbers = {name: calls_per_sample(fn, sample_time) for name, fn in runs.items()}
    samples = {name: [] for name in runs}
    for _ in range(rounds):
        for name, fn in runs.items():
            time.sleep(settle)
            fn()
            samples[name].append(seconds_per_call(fn, numbers[name]))
    return samples


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--sizes", default="512")
    args = parser.parse_args(argv)
    from threadpoolctl import threadpool_limits

    info = CPUInfo(CPUInfo.host().vector_bytes, args.threads)
    rng = np.random.default_rng(0)
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}; {args.threads} threads "
          f"each; {args.rounds} alternating rounds; {info}")
    print(f"{'matmul (default schedule)':28s}{'rvm GFLOPS':>24s}{'numpy GFLOPS':>24s}"
          f"{'x numpy':>9s}")
    for n in (int(s) for s in args.sizes.split(",")):
        mod = DefaultCPUSchedule(info=info)(IRModule({"matmul": matmul(n)}))
        f = build(mod, target="c")["matmul"]
        a, b = (rng.standard_normal((n, n)).astype("float32") for _ in range(2))
        na, nb, nc = rvm.nd.array(a), rvm.nd.array(b), rvm.nd.empty((n, n))
        f(na, nb, nc)
        np.testing.assert_allclose(nc.numpy(), a @ b, rtol=1e-3, atol=1e-2)
        with threadpool_limits(args.threads):
            samples = measure({"rvm": lambda: f(na, nb, nc), "numpy": lambda: a @ b},
                              args.rounds)
        flops = 2 * n ** 3
        cells, medians = [], []
        for name in ("rvm", "numpy"):
            g = [flops / s / 1e9 for s in samples[name]]
            medians.append(statistics.median(g))
            cells.append(f"{medians[-1]:8.1f} [{min(g):6.1f},{max(g):6.1f}]")
        print(f"{f'{n}x{n}x{n} float32':28s}{cells[0]:>24s}{cells[1]:>24s}"
              f"{medians[0] / medians[1]:9.2f}")


if __name__ == "__main__":
    main()
