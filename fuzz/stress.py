"""Stress: threads sharing one Executable, and resident memory over many calls.

    python fuzz/stress.py threads [--threads 8] [--calls 10000]
    python fuzz/stress.py rss [--calls 200000] [--engine native]

``threads``: each thread makes its own VirtualMachine over one shared
Executable (a kernel plus VM builtins) and checks every result exactly.
``rss``: one VM called repeatedly; resident set size sampled every tenth of
the run after a warm-up of 10% of the calls, reported as the growth from the
first sample to the largest.
"""
import argparse
import json
import resource
import sys
import threading
import time

import numpy as np


def _executable():
    from rvm import relax
    from tests.e2e.test_safe_loading import AddOne
    return relax.build(AddOne, target="c")


def _rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def threads(args):
    from rvm.runtime.device import cpu
    from rvm.vm.machine import VirtualMachine
    ex = _executable()
    errors, done = [], [0] * args.threads

    def work(t):
        vm = VirtualMachine(ex, cpu(), engine=args.engine)
        rng = np.random.default_rng(t)
        try:
            for i in range(args.calls):
                x = rng.standard_normal(8).astype("float32")
                got = vm["main"](x).numpy()
                if not np.array_equal(got, x + np.float32(1)):
                    errors.append((t, i))
                done[t] += 1
        except Exception as err:  # reported, not raised in the thread
            errors.append((t, repr(err)))

    start = time.perf_counter()
    pool = [threading.Thread(target=work, args=(t,)) for t in range(args.threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    return {"test": "threads", "engine": args.engine, "threads": args.threads,
            "calls": sum(done), "mismatches_or_errors": len(errors),
            "seconds": round(time.perf_counter() - start, 2)}


def rss(args):
    from rvm.runtime.device import cpu
    from rvm.vm.machine import VirtualMachine
    vm = VirtualMachine(_executable(), cpu(), engine=args.engine)
    x = np.arange(8, dtype="float32")
    warm = args.calls // 10
    samples = []
    for i in range(args.calls):
        vm["main"](x)
        if i >= warm and (i - warm) % max(1, (args.calls - warm) // 10) == 0:
            samples.append(_rss_kb())
    samples.append(_rss_kb())
    growth = (max(samples) - samples[0]) / samples[0]
    return {"test": "rss", "engine": args.engine, "calls": args.calls, "rss_kb": samples,
            "growth_percent": round(100 * growth, 2)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=["threads", "rss"])
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--calls", type=int, default=None)
    parser.add_argument("--engine", default="native", choices=["native", "python"])
    args = parser.parse_args()
    if args.calls is None:
        args.calls = 10000 if args.kind == "threads" else 200000
    result = (threads if args.kind == "threads" else rss)(args)
    print(json.dumps(result))
    failed = result.get("mismatches_or_errors", 0) or result.get("growth_percent", 0) > 5
    return 1 if failed else 0


if __name__ == "__main__":
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1]))
    sys.exit(main())
