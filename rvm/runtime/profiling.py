"""Timing packed functions: time_evaluator and its result."""
import statistics
import time


class BenchmarkResult:
    """Seconds per call for each repeat, with summary statistics."""

    def __init__(self, results):
        self.results = tuple(results)
        self.mean = statistics.fmean(self.results)
        self.median = statistics.median(self.results)
        self.min = min(self.results)
        self.max = max(self.results)
        self.std = statistics.pstdev(self.results) if len(self.results) > 1 else 0.0

    def __repr__(self):
        return (f"BenchmarkResult(mean={self.mean:.6g}s, median={self.median:.6g}s, "
                f"min={self.min:.6g}s, max={self.max:.6g}s, std={self.std:.3g}s, "
                f"repeat={len(self.results)})")

    def __str__(self):
        ms = [x * 1e3 for x in (self.mean, self.median, self.max, self.min, self.std)]
        return ("Execution time summary:\n"
                " mean (ms)   median (ms)    max (ms)     min (ms)     std (ms)\n"
                + "  ".join(f"{v:10.4f}" for v in ms))


def time_evaluator(func, number=10, repeat=1, min_repeat_ms=0):
    """Returns a function that runs ``func(*args)`` and returns a BenchmarkResult.

    Each of ``repeat`` measurements times ``number`` calls and records the mean
    seconds per call; if a measurement takes less than ``min_repeat_ms``,
    ``number`` grows until it does not. One untimed call warms up first.

    >>> timer = time_evaluator(lambda: None, number=5, repeat=3)
    >>> len(timer().results)
    3
    """
    if number < 1 or repeat < 1:
        raise ValueError(f"time_evaluator needs number >= 1 and repeat >= 1, got {number}, {repeat}")
    if not callable(func):
        raise TypeError(f"time_evaluator expects a callable, got {type(func).__name__}")

    def evaluate(*args):
        func(*args)
        n = number
        results = []
        clock = time.perf_counter
        while len(results) < repeat:
            start = clock()
            for _ in range(n):
                func(*args)
            elapsed = clock() - start
            if elapsed * 1e3 < min_repeat_ms and n < 1 << 30:
                scale = min_repeat_ms / max(elapsed * 1e3, 1e-3)
                n = max(n * 2, int(n * scale * 1.1))
                continue
            results.append(elapsed / n)
        return BenchmarkResult(results)

    return evaluate
