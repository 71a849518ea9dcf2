"""Timing shared by the benchmarks: several callables measured in alternating rounds so that a change in the machine's load moves
all of them, not whichever happened to be measured at the time.

Threaded libraries keep their worker threads spinning for a while after a call
(OpenBLAS for about 0.1 s, OpenMP runtimes for less), so a sample taken right after
another library's calls shares the cores with those spinning threads. Each round
therefore pauses ``settle`` seconds before every sample, then makes one untimed call
(the first call after a pause wakes threads and refills caches)."""
import statistics
import time


def seconds_per_call(fn, number):
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


def calls_per_sample(fn, sample_time):
    """How many calls of fn (after one warm-up call) fill about sample_time seconds."""
    fn()
    number = 1
    while seconds_per_call(fn, number) * number < sample_time and number < 1 << 20:
        number *= 2
    return number


def alternating_samples(runs, repeat=15, min_time=0.2, settle=0.2):
    """{name: [seconds per call, one per round]} for a dict of callables, sampled in
    ``repeat`` rounds that take one sample of each in turn (each about min_time / repeat
    seconds, after a pause of ``settle`` seconds and an untimed call)."""
    numbers = {name: calls_per_sample(fn, min_time / repeat) for name, fn in runs.items()}
    samples = {name: [] for name in runs}
    for _ in range(repeat):
        for name, fn in runs.items():
            time.sleep(settle)
            fn()
            samples[name].append(seconds_per_call(fn, numbers[name]))
    return samples


def alternating_medians(runs, repeat=15, min_time=0.2, settle=0.2):
    """{name: median seconds per call} of ``alternating_samples``."""
    samples = alternating_samples(runs, repeat, min_time, settle)
    return {name: statistics.median(s) for name, s in samples.items()}
