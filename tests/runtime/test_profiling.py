"""time_evaluator on any packed function."""
import time

import pytest

from rvm.runtime.packed_func import PackedFunc
from rvm.runtime.profiling import BenchmarkResult, time_evaluator


def test_results_are_seconds_per_call():
    res = time_evaluator(PackedFunc(lambda: time.sleep(0.002)), number=3, repeat=2)()
    assert len(res.results) == 2
    assert 0.0015 < res.min <= res.median <= res.max < 0.5


def test_min_repeat_ms_grows_number():
    calls = []
    res = time_evaluator(lambda: calls.append(1), number=1, repeat=2, min_repeat_ms=5)()
    assert len(res.results) == 2
    assert len(calls) > 10  # one call could never take 5 ms


def test_arguments_are_passed():
    seen = []
    time_evaluator(lambda a, b: seen.append((a, b)), number=2)(1, "x")
    assert set(seen) == {(1, "x")}


def test_bad_parameters():
    with pytest.raises(ValueError, match="number >= 1"):
        time_evaluator(lambda: None, number=0)
    with pytest.raises(TypeError, match="expects a callable"):
        time_evaluator(3)


def test_summary():
    r = BenchmarkResult([1.0, 2.0, 3.0])
    assert (r.mean, r.median, r.min, r.max) == (2.0, 2.0, 1.0, 3.0)
    assert "mean (ms)" in str(r) and "median=2s" in repr(r)
