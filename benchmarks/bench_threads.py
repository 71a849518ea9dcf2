"""Threads over one Executable: throughput of a kernel-bound model with 1, 2 and 4 threads,
each thread with its own VirtualMachine (native engine, which runs C kernels without the
GIL), every result checked exactly.

    python benchmarks/bench_threads.py [--calls 5000] [--batch 16] [--rounds 3]

The model is seed 004's MLP (784-128-10, relu, three unscheduled TensorIR kernels) at a
batch where the kernels take nearly all of a call. Each of ``threads`` threads makes
``calls`` calls; throughput is calls per second over all threads, the median of
``rounds`` rounds, and "x 1 thread" divides it by the one-thread throughput.
"cores" is the process's CPU time over the wall time of the calls: how many cores
the threads got (on a shared machine, fewer than there are). The last row runs two
threads with ``release_gil=False``: what releasing the GIL around C kernels buys.
Below the table, the same for numpy's matmul of the first layer (one BLAS thread,
which releases the GIL): the scaling this machine gives a C kernel, the ceiling.
"""
import argparse
import os
import statistics
import threading
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: one BLAS thread per call
import numpy as np  # noqa: E402

import rvm  # noqa: E402
from bench_e2e import mlp_module, mlp_params
from rvm.driver.relax_build import build
from rvm.vm.machine import VirtualMachine


def timed_threads(threads, work):
    """(seconds, CPU seconds) of ``threads`` threads running ``work(k)``, started together."""
    start_line = threading.Barrier(threads + 1)

    def run(k):
        start_line.wait()
        work(k)

    workers = [threading.Thread(target=run, args=(k,)) for k in range(threads)]
    for w in workers:
        w.start()
    start_line.wait()
    start, cpu_start = time.perf_counter(), time.process_time()
    for w in workers:
        w.join()
    return time.perf_counter() - start, time.process_time() - cpu_start


def run_threads(ex, x, expected, threads, calls, release_gil=True):
    """(seconds, CPU seconds) of ``threads`` threads making ``calls`` calls each; checks
    every result."""
    vms = [VirtualMachine(ex, rvm.cpu(), release_gil=release_gil) for _ in range(threads)]
    mains = [vm["main"] for vm in vms]
    for main in mains:
        main(x)   # warm the storage pools
    results = [[] for _ in range(threads)]

    def work(k):
        main, out = mains[k], results[k]
        for _ in range(calls):
            out.append(main(x))

    seconds, cpu = timed_threads(threads, work)
    for out in results:
        assert len(out) == calls
        for value in out:
            if not np.array_equal(value.numpy(), expected):
                raise AssertionError("a thread computed a different result")
    return seconds, cpu


def numpy_threads(batch, threads, calls):
    """(seconds, CPU seconds) of ``threads`` threads each computing ``calls`` products
    x @ w0.T (the first layer's matmul) in numpy."""
    rng = np.random.default_rng(0)
    x, w = rng.random((batch, 784), dtype=np.float32), rng.random((128, 784), dtype=np.float32)

    def work(k):
        for _ in range(calls):
            np.dot(x, w.T)

    return timed_threads(threads, work)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    params = mlp_params()
    ex = build(mlp_module(args.batch), target="c",
               params={k: rvm.nd.array(v) for k, v in params.items()})
    x = rvm.nd.array(np.random.default_rng(0).random((args.batch, 784), dtype=np.float32))
    expected = VirtualMachine(ex, rvm.cpu())["main"](x).numpy()
    configs = ((1, True), (2, True), (4, True), (2, False))  # (threads, release_gil)
    rates, cores = {c: [] for c in configs}, {c: [] for c in configs}
    for _ in range(args.rounds):
        for n, release in configs:
            seconds, cpu = run_threads(ex, x, expected, n, args.calls, release)
            rates[n, release].append(n * args.calls / seconds)
            cores[n, release].append(cpu / seconds)
    ceiling = {n: [] for n in (1, 2)}
    for _ in range(args.rounds):
        for n in ceiling:
            seconds, cpu = numpy_threads(args.batch, n, args.calls)
            ceiling[n].append((n * args.calls / seconds, cpu / seconds))
    one = statistics.median(rates[1, True])
    print(f"MLP 784-128-10, batch {args.batch}; {args.calls} calls per thread, exact results; "
          f"median of {args.rounds} rounds; {os.cpu_count()} cores")
    print(f"{'threads':>16} {'calls/s':>10} {'us/call':>9} {'x 1 thread':>11} {'cores':>6}")
    for n, release in configs:
        rate = statistics.median(rates[n, release])
        label = str(n) if release else f"{n} (GIL held)"
        print(f"{label:>16} {rate:>10.0f} {1e6 / rate:>9.1f} {rate / one:>11.2f} "
              f"{statistics.median(cores[n, release]):>6.2f}")
    np_one = statistics.median(r for r, _ in ceiling[1])
    for n, runs in ceiling.items():
        rate = statistics.median(r for r, _ in runs)
        print(f"{f'numpy matmul, {n}':>16} {rate:>10.0f} {1e6 / rate:>9.1f} "
              f"{rate / np_one:>11.2f} {statistics.median(c for _, c in runs):>6.2f}")


if __name__ == "__main__":
    main()
