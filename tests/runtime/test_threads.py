"""The thread count of kernels' parallel loops (rvm.runtime.threads) and the chunked
sharing of a parallel loop's iterations (rvm/codegen/c/polls.py): exact under
oversubscription, a late thread's share taken by the others, bit-identical results
whatever the thread count, and an error raised in any thread of the team reported."""
import ctypes

import numpy as np
import pytest

import rvm
from rvm import relax, te
from rvm.codegen.c.preamble import render_preamble
from rvm.runtime import threads
from rvm.runtime.compiler import default_compiler
from rvm.script import ir as I, relax as R, tir as T
from rvm.tir.stmt import ForKind
from tests.codegen.kernel_cases import set_loop_kind


@pytest.fixture
def restore_threads():
    yield
    threads.set_num_threads(0)


def test_the_thread_count_defaults_to_the_cpus_and_is_set_and_restored(restore_threads):
    assert threads.num_threads() == threads.default_num_threads() >= 1
    rvm.runtime.set_num_threads(3)
    assert rvm.runtime.num_threads() == 3
    rvm.runtime.config_threadpool(nthreads=5)
    assert threads.num_threads() == 5
    rvm.runtime.config_threadpool()
    assert threads.num_threads() == threads.default_num_threads()


@pytest.mark.parametrize("call, error, message", [
    (lambda: threads.set_num_threads(-1), ValueError, r"0 \(the default\) to 1024 threads, got -1"),
    (lambda: threads.set_num_threads(1025), ValueError, "got 1025"),
    (lambda: threads.set_num_threads(2.0), TypeError, "expects an int, got float"),
    (lambda: threads.set_num_threads(True), TypeError, "expects an int, got bool"),
    (lambda: threads.config_threadpool(1, 2), ValueError, "affinity_mode must be 0"),
])
def test_a_bad_thread_count_is_refused_and_changes_nothing(call, error, message):
    before = threads.num_threads()
    with pytest.raises(error, match=message):
        call()
    assert threads.num_threads() == before


def _parallel_scale(shape):
    A = te.placeholder(shape, name="A")
    func = te.create_prim_func([A, te.compute(shape, lambda *i: A[i] * 2.0 + 1.0, name="B")])
    return set_loop_kind(func, "i0", ForKind.PARALLEL)


@pytest.mark.parametrize("count", [1, 2, 3, 7, 16])
def test_a_parallel_loop_is_exact_with_more_threads_than_cores(count, restore_threads):
    f = rvm.build(_parallel_scale((1001, 33)), target="c")["main"]
    a = np.random.default_rng(count).standard_normal((1001, 33)).astype("float32")
    threads.set_num_threads(count)
    for _ in range(20):
        b = rvm.nd.array(np.full((1001, 33), np.nan, "float32"))
        f(rvm.nd.array(a), b)
        np.testing.assert_array_equal(b.numpy(), a * 2 + 1)


# A parallel region as kernels have it (chunk helpers, rvm's GOMP_parallel), on rvm's pool:
# owner[i] is the rank of the thread that ran iteration i (the caller is 0); threads other
# than the caller sleep late_us before taking chunks; each chunk sleeps chunk_us.
_REGION = r"""
#include <pthread.h>
#include <unistd.h>
RVM_EXPORT int rvm_region(int64_t n, int team, int late_us, int chunk_us, int32_t* owner,
                          int32_t* runs) {
  const uint64_t chunk = rvm_chunk_size((uint64_t)n, team);
  const pthread_t caller = pthread_self();
  pthread_t seen[64];
  int ranks = 1;
  uint64_t next = 0;
  seen[0] = caller;
#pragma omp parallel num_threads(team) if(team > 1)
  {
    int me = -1;
    uint64_t first, last;
    if (!pthread_equal(pthread_self(), caller)) usleep(late_us);
    while (rvm_take_chunk(&next, (uint64_t)n, chunk, &first, &last)) {
      if (me < 0) {
#pragma omp critical
        {
          for (int r = 0; r < ranks && me < 0; ++r)
            if (pthread_equal(seen[r], pthread_self())) me = r;
          if (me < 0 && ranks < 64) { seen[ranks] = pthread_self(); me = ranks++; }
        }
      }
      if (chunk_us) usleep(chunk_us);
      for (uint64_t i = first; i < last; ++i) {
        owner[i] = me;
        __atomic_add_fetch(&runs[i], 1, __ATOMIC_RELAXED);
      }
    }
  }
  return ranks;
}
"""


@pytest.fixture(scope="module")
def region():
    compiler = default_compiler()
    if not compiler.openmp:
        pytest.skip("the C compiler has no OpenMP")
    lib = ctypes.CDLL(str(compiler.compile(render_preamble(True) + _REGION).path))
    fn = lib.rvm_region
    fn.argtypes = [ctypes.c_int64, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_void_p,
                   ctypes.c_void_p]

    def run(n, team, late_us=0, chunk_us=0):
        owner = np.full(max(n, 1), -1, np.int32)
        runs = np.zeros(max(n, 1), np.int32)
        ranks = fn(n, team, late_us, chunk_us, owner.ctypes.data, runs.ctypes.data)
        return owner[:n], runs[:n], ranks

    return run


@pytest.mark.parametrize("n", [1, 2, 15, 16, 17, 1000])
def test_late_threads_chunks_are_taken_by_the_caller(region, n):
    owner, runs, _ = region(n, 3, late_us=50_000)
    assert (runs == 1).all()  # every iteration ran, once
    assert (owner == 0).all()  # the caller did the late threads' shares


@pytest.mark.parametrize("n, team", [(0, 4), (5, 8), (1 << 20, 3), (64, 1)])
def test_chunks_cover_every_iteration_once(region, n, team):
    owner, runs, _ = region(n, team)
    assert (runs == 1).all() and (owner >= 0).all() and (owner < team).all()


def test_the_team_is_rvms_thread_count_whatever_openmp_was_told(region, restore_threads):
    # torch.set_num_threads calls omp_set_num_threads: rvm's pool does not read it
    ctypes.CDLL("libgomp.so.1").omp_set_num_threads(1)
    threads.set_num_threads(3)
    owner, runs, ranks = region(48, rvm.runtime.num_threads(), chunk_us=2000)
    assert (runs == 1).all() and ranks == 3 and set(owner.tolist()) == {0, 1, 2}


def test_a_parallel_reduction_kernel_is_bit_identical_whatever_the_thread_count(
        restore_threads):
    # parallel rows, a long float reduction per output: chunks may go to any thread
    n, k, m = 131, 1031, 9
    a_ph, b_ph = te.placeholder((n, k), name="A"), te.placeholder((k, m), name="B")
    r = te.reduce_axis((0, k), name="k")
    c = te.compute((n, m), lambda i, j: te.sum(a_ph[i, r] * b_ph[r, j], axis=r), name="C")
    func = set_loop_kind(te.create_prim_func([a_ph, b_ph, c]), "i", ForKind.PARALLEL)
    lib = rvm.build(func, target="c")
    assert "#pragma omp parallel" in lib.get_source()
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, k)).astype("float32")
    b = rng.standard_normal((k, m)).astype("float32")
    first = None
    for count in (1, 2, 3, 5, 2, 1):
        threads.set_num_threads(count)
        for _ in range(3):
            out = rvm.nd.array(np.zeros((n, m), "float32"))
            lib["main"](rvm.nd.array(a), rvm.nd.array(b), out)
            if first is None:
                first = out.numpy()
                np.testing.assert_allclose(first, a @ b, rtol=1e-3, atol=1e-3)
            assert np.array_equal(out.numpy(), first), f"{count} threads"


@I.ir_module
class RowScratch:
    @T.prim_func
    def rows(x: T.handle, y: T.handle):  # a 3 MB scratch buffer per row, in parallel
        X = T.match_buffer(x, (16,), "float32")
        Y = T.match_buffer(y, (16,), "float32")
        for i in T.parallel(16):
            with T.block("row"):
                vi = T.axis.remap("S", [i])
                S = T.alloc_buffer((T.int64(1048576),), "float32")
                for j in range(4):
                    with T.block("S"):
                        vj = T.axis.remap("S", [j])
                        S[vj * 262144 + 5] = X[vi] * T.float32(3)
                Y[vi] = S[3 * 262144 + 5] + T.float32(1)

    @R.function
    def main(x: R.Tensor((16,), "float32")):
        cls = RowScratch
        with R.dataflow():
            y = R.call_tir(cls.rows, (x,), out_sinfo=R.Tensor((16,), "float32"))
            R.output(y)
        return y


@pytest.mark.parametrize("engine", ["native", "python"])
@pytest.mark.parametrize("count", [2, 5])
def test_an_error_in_the_threads_of_the_team_is_reported(engine, count, restore_threads):
    built = relax.build(RowScratch, target="c", default_schedule=False)
    threads.set_num_threads(count)
    x = np.arange(16, dtype="float32")
    # No row's scratch fits: every thread that takes a chunk fails its allocation.
    vm = relax.VirtualMachine(built, rvm.cpu(), engine=engine, memory_limit=1 << 20)
    for _ in range(3):
        with pytest.raises(MemoryError, match=r"rows: \d+ more bytes would exceed the VM's "
                                              r"memory_limit of 1048576 bytes"):
            vm["main"](x)
    assert vm.memory_stats()[0]["vm_bytes_in_use"] <= 64  # no scratch left behind
    roomy = relax.VirtualMachine(built, rvm.cpu(), engine=engine, memory_limit=64 << 20)
    np.testing.assert_array_equal(roomy["main"](x).numpy(), x * 3 + 1)


def test_concurrent_callers_share_the_pool_and_stay_exact(restore_threads):
    # one caller's region runs on the pool, another's (finding it busy) alone
    import threading

    f = rvm.build(_parallel_scale((257, 31)), target="c")["main"]
    threads.set_num_threads(2)
    a = np.random.default_rng(7).standard_normal((257, 31)).astype("float32")
    failures = []

    def work():
        x = rvm.nd.array(a)
        for _ in range(200):
            b = rvm.nd.array(np.zeros((257, 31), "float32"))
            f(x, b)
            if not np.array_equal(b.numpy(), a * 2 + 1):
                failures.append(1)

    callers = [threading.Thread(target=work) for _ in range(3)]
    for t in callers:
        t.start()
    for t in callers:
        t.join()
    assert not failures


def test_a_forked_child_runs_parallel_loops_on_its_own_pool(restore_threads):
    import multiprocessing

    f = rvm.build(_parallel_scale((129, 17)), target="c")["main"]
    threads.set_num_threads(2)
    a = np.arange(129 * 17, dtype="float32").reshape(129, 17)
    f(rvm.nd.array(a), rvm.nd.array(np.zeros_like(a)))  # the parent's workers exist
    context = multiprocessing.get_context("fork")
    results = context.Queue()

    def child():
        b = rvm.nd.array(np.zeros_like(a))
        f(rvm.nd.array(a), b)
        results.put(bool(np.array_equal(b.numpy(), a * 2 + 1)))

    process = context.Process(target=child)
    process.start()
    ok = results.get(timeout=60)
    process.join(60)
    assert ok and process.exitcode == 0
