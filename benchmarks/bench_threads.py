"""Threads over one Executable: throughput of a kernel-bound model with 1, 2 and 4 threads,
each thread with its own VirtualMachine (native engine, which runs C kernels without the
GIL), every result checked exactly.

    python benchmarks/bench_threads.py [--calls 5000] [--batch 16] [--rounds 3]

The model is seed 004's MLP (784-128-10, relu, three unscheduled TensorIR kernels) at a
batch where the kernels take nearly all of a call. Each of ``threads`` threads makes
``calls`` calls; throughput is calls per second over all threads, the median of
``rounds`` rounds, and "x 1 thread" divides it by the one-thread throughput.
"""
import argparse
import os
import statistics
import threading
import time

import numpy as np

import rvm
from bench_e2e import mlp_module, mlp_params
from rvm.driver.relax_build import build
from rvm.vm.machine import VirtualMachine


def run_threads(ex, x, expected, threads, calls):
    """Seconds for ``threads`` threads making ``calls`` calls each; checks every result."""
    vms = [VirtualMachine(ex, rvm.cpu()) for _ in range(threads)]
    mains = [vm["main"] for vm in vms]
    for main in mains:
        main(x)   # warm the storage pools
    results = [[] for _ in range(threads)]
    start_line = threading.Barrier(threads + 1)

    def work(k):
        main, out = mains[k], results[k]
        start_line.wait()
        for _ in range(calls):
            out.append(main(x))

    workers = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    for w in workers:
        w.start()
    start_line.wait()
    start = time.perf_counter()
    for w in workers:
        w.join()
    seconds = time.perf_counter() - start
    for out in results:
        assert len(out) == calls
        for value in out:
            if not np.array_equal(value.numpy(), expected):
                raise AssertionError("a thread computed a different result")
    return seconds


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
    counts = (1, 2, 4)
    rates = {n: [] for n in counts}
    for _ in range(args.rounds):
        for n in counts:
            rates[n].append(n * args.calls / run_threads(ex, x, expected, n, args.calls))
    one = statistics.median(rates[1])
    print(f"MLP 784-128-10, batch {args.batch}; {args.calls} calls per thread, exact results; "
          f"median of {args.rounds} rounds; {os.cpu_count()} cores")
    print(f"{'threads':>7} {'calls/s':>10} {'us/call':>9} {'x 1 thread':>11}")
    for n in counts:
        rate = statistics.median(rates[n])
        print(f"{n:>7} {rate:>10.0f} {1e6 / rate:>9.1f} {rate / one:>11.2f}")


if __name__ == "__main__":
    main()
