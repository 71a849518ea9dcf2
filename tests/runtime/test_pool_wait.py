"""How the thread pool's idle workers wait for the next parallel region
(native/src/thread_pool.c): the first (CPUs - 1) workers spin for 20 ms of their own CPU
time, so a worker is still running when the next region comes after a serial gap (a
sleeping worker is woken late, or not at all before the region ends, when another process
holds a core); workers beyond the process's CPUs spin 0.1 ms; every worker then sleeps,
so an idle pool costs no CPU."""
import os
import time

import numpy as np
import pytest

import rvm
from rvm import te
from rvm.runtime import threads
from rvm.tir.stmt import ForKind
from tests.codegen.kernel_cases import set_loop_kind

SPIN_S = 0.020  # RVM_POOL_SPIN_NS
SHORT_SPIN_S = 0.0001  # RVM_POOL_SHORT_SPIN_NS

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/task"),
                                reason="reads thread states from /proc")


@pytest.fixture(scope="module")
def scale():
    """A kernel whose row loop is parallel, and its arguments."""
    a_ph = te.placeholder((256, 64), name="A")
    func = te.create_prim_func([a_ph, te.compute((256, 64), lambda i, j: a_ph[i, j] * 2.0,
                                                 name="B")])
    lib = rvm.build(set_loop_kind(func, "i", ForKind.PARALLEL), target="c")
    if "#pragma omp parallel" not in lib.get_source():
        pytest.skip("the C compiler has no OpenMP: no parallel region")
    f = lib["main"]
    a = np.random.default_rng(0).standard_normal((256, 64)).astype("float32")
    return f, rvm.nd.array(a), rvm.nd.array(np.zeros_like(a)), a


@pytest.fixture
def restore_threads():
    yield
    threads.set_num_threads(0)


def _pool_states():
    """{thread id: state letter} of the pool's workers (threads named rvm-pool)."""
    states = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/comm") as f:
                if f.read().strip() != "rvm-pool":
                    continue
            with open(f"/proc/self/task/{tid}/stat") as f:
                states[tid] = f.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:  # the thread ended meanwhile
            continue
    return states


def _run(scale, calls=5):
    f, a, b, expected = scale
    for _ in range(calls):
        f(a, b)
    np.testing.assert_array_equal(b.numpy(), expected * 2)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one CPU: no worker spins long")
def test_a_worker_still_spins_after_a_gap_longer_than_a_short_spin(scale, restore_threads):
    threads.set_num_threads(2)
    _run(scale)
    time.sleep(0.003)  # thirty times the short spin, far below 20 ms of CPU time
    assert "R" in _pool_states().values(), _pool_states()
    _run(scale)  # and the next region is still exact


def test_idle_workers_stop_spinning_within_their_budget(scale, restore_threads):
    # a team larger than the machine: only the first (CPUs - 1) workers spin long
    threads.set_num_threads(8)
    _run(scale)
    deadline = time.monotonic() + 5
    while len(_pool_states()) < 7 and time.monotonic() < deadline:
        time.sleep(0.01)  # a worker names itself when it first runs
    workers = len(_pool_states())
    assert workers >= 7
    _run(scale)  # every worker has run: each now spins its budget, then sleeps
    long_spinners = min(workers, len(os.sched_getaffinity(0)) - 1)
    start = time.process_time()
    time.sleep(1.0)  # time to spend the budget even with a few busy processes around
    spent = time.process_time() - start
    bound = long_spinners * SPIN_S + workers * SHORT_SPIN_S + 0.015
    assert spent <= bound, f"{workers} idle workers spent {spent * 1e3:.1f} ms of CPU"
    start = time.process_time()
    time.sleep(0.3)
    assert time.process_time() - start < 0.005  # all asleep
    assert set(_pool_states().values()) <= {"S"}
