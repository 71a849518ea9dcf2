"""What the cancellation polls of generated kernels cost (rvm.codegen.c.polls): seed
004's MLP (784-128-10) at batch 1 and at batch 64, built with polls and without them
(the internal switch ``c_polls.ENABLED``), on the native engine, timed in alternating
rounds so a busy moment of the machine hits both builds alike.

    python benchmarks/bench_kernel_polls.py [--rounds 7]

A round times each build as the fastest of 5 bursts of 40 ms of thread CPU time; prints per batch the
median and range over the rounds of us per call of each build and the median of the
per-round ratio (with polls / without).
"""
import argparse
import statistics
import time

import numpy as np

import rvm
from bench_e2e import mlp_module, mlp_params
from rvm.codegen.c import polls as c_polls
from rvm.driver.relax_build import build
from rvm.runtime.device import cpu
from rvm.vm.machine import VirtualMachine


def build_vm(batch, polls):
    """A native VM of the MLP at ``batch``, its kernels built with or without polls."""
    c_polls.ENABLED = polls
    try:
        params = {k: rvm.nd.array(v) for k, v in mlp_params().items()}
        return VirtualMachine(build(mlp_module(batch), target="c", params=params), cpu())
    finally:
        c_polls.ENABLED = True


def us_per_call(fn, x, bursts=5, seconds=0.04):
    """CPU us of this thread per call of ``fn(x)`` (the kernels here are serial): the
    fastest of ``bursts`` bursts of about ``seconds`` each. CPU time rather than wall time,
    so that the other work of a shared machine, which preempts the thread, stays out."""
    fn(x)
    best = float("inf")
    for _ in range(bursts):
        number, start = 0, time.thread_time()
        while time.thread_time() - start < seconds:
            for _ in range(10):
                fn(x)
            number += 10
        best = min(best, (time.thread_time() - start) / number * 1e6)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    print(f"{'MLP 784-128-10':18s} {'with polls us':>22s} {'without us':>22s} {'ratio':>7s}")
    for batch in (1, 64):
        x = np.random.default_rng(1).standard_normal((batch, 784)).astype("float32")
        vms = {polls: build_vm(batch, polls) for polls in (True, False)}
        expect = vms[False]["main"](x).numpy()
        np.testing.assert_array_equal(vms[True]["main"](x).numpy(), expect)
        times = {True: [], False: []}
        ratios = []
        for k in range(args.rounds):
            order = (True, False) if k % 2 == 0 else (False, True)
            for polls in order:
                times[polls].append(us_per_call(vms[polls]["main"], x))
            ratios.append(times[True][-1] / times[False][-1])

        def cell(ts):
            return f"{statistics.median(ts):7.2f} ({min(ts):.2f}-{max(ts):.2f})"

        print(f"{'batch ' + str(batch):18s} {cell(times[True]):>22s} {cell(times[False]):>22s} "
              f"{statistics.median(ratios):7.3f}")


if __name__ == "__main__":
    main()
