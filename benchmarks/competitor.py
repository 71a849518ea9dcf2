"""Measuring under load: one competing CPU-bound process, and per-call latency quartiles.

A parallel kernel whose threads wait for each other collapses when another process
holds a core: a descheduled thread holds its team up for a scheduler time slice
(milliseconds), which shows in the upper quartile of per-call latencies long before
it moves the median. ``competing_process()`` starts one process that spins on a core
until the block ends; ``alternating_latencies`` times every call separately, in
rounds that take one sample of each callable in turn (as timing.alternating_medians
does), so a change of load moves all callables alike.
"""
import contextlib
import statistics
import subprocess
import sys
import time

from timing import calls_per_sample


_SPIN = "x = 0\nwhile True:\n    x = (x * 1103515245 + 12345) & 0xFFFFFFFF\n"


@contextlib.contextmanager
def competing_process():
    """Runs one CPU-bound process (a pure Python loop, a fresh interpreter) for the
    duration of the block."""
    process = subprocess.Popen([sys.executable, "-c", _SPIN])
    time.sleep(0.5)  # let it start and take its core
    try:
        if process.poll() is not None:
            raise RuntimeError(f"the competing process exited at once ({process.returncode})")
        yield process
    finally:
        process.kill()
        process.wait()


def alternating_latencies(runs, repeat=15, min_time=0.2, settle=0.05):
    """{name: sorted seconds of every timed call} for a dict of callables: ``repeat``
    rounds, each timing about min_time / repeat seconds of calls of each in turn (after a
    pause of ``settle`` seconds and an untimed call), every call timed on its own."""
    numbers = {name: calls_per_sample(fn, min_time / repeat) for name, fn in runs.items()}
    samples = {name: [] for name in runs}
    clock = time.perf_counter
    for _ in range(repeat):
        for name, fn in runs.items():
            time.sleep(settle)
            fn()
            out = samples[name]
            for _ in range(numbers[name]):
                start = clock()
                fn()
                out.append(clock() - start)
    return {name: sorted(s) for name, s in samples.items()}


def quartiles(latencies):
    """(median, upper quartile) of a list of latencies."""
    q1, q2, q3 = statistics.quantiles(latencies, n=4)
    return q2, q3
