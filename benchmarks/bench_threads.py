"""Threads over one Executable: throughput of a kernel-bound model with 1, 2 and 4 threads,
each thread with its own VirtualMachine (native engine, which runs C kernels without the
GIL), every result checked exactly.

    python benchmarks/bench_threads.py [--calls 5000] [--batch 16] [--rounds 3] [--trials 32]
    python benchmarks/bench_threads.py --competitor [--rounds 7]

The model is seed 004's MLP (784-128-10, relu, three TensorIR kernels) at a batch where
the kernels take nearly all of a call: built untuned (the kernels' naive loop order), and
tuned (``tune_relax`` with ``--trials`` trials per kernel for one core, as a model is
deployed to one thread each; rows marked "tuned"). Each of ``threads`` threads makes
``calls`` calls; throughput is calls per second over all threads, the median of
``rounds`` rounds, and "x 1 thread" divides it by the one-thread throughput.
"cores" is the process's CPU time over the wall time of the calls: how many cores
the threads got (on a shared machine, fewer than there are). Further rows: two
threads with ``release_gil=False`` (what releasing the GIL around C kernels buys);
two threads whose VirtualMachines hold their own copy of the constants
(``own_constants=True``, over the same Executable: what sharing the weights costs);
two processes forked from this one, one thread each (the same pages of program,
kernels and weights, and no GIL shared: what the machine gives two callers that
share nothing but memory); and numpy's matmul of the first layer (one BLAS thread,
releasing the GIL) in 1 and 2 threads, reading one weight array or a copy each.

``--competitor`` measures rvm's thread pool instead: a kernel whose outer loop is
parallel (a rows x 256 by 256 x 16 matmul, each output row's reduction serial),
every call timed on its own, with 1 and 2 threads (``rvm.runtime.set_num_threads``),
quiet and with one competing CPU-bound process (benchmarks/competitor.py): the
median, the loaded upper quartile over the loaded median and the slowdown (loaded
over quiet median).
"""
import argparse
import multiprocessing
import os
import statistics
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: one BLAS thread per call
import numpy as np  # noqa: E402

import rvm  # noqa: E402
from bench_e2e import mlp_module, mlp_params
from competitor import alternating_latencies, competing_process, quartiles
from rvm import meta_schedule as ms
from rvm.driver.relax_build import build
from rvm.relax.transform.bind_params import BindParams
from rvm.meta_schedule.apply_database import MetaScheduleApplyDatabase
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


def run_threads(exs, x, expected, calls, release_gil=True, own_constants=False):
    """(seconds, CPU seconds) of one thread per Executable of ``exs`` making ``calls`` calls
    each; checks every result."""
    threads = len(exs)
    vms = [VirtualMachine(ex, rvm.cpu(), release_gil=release_gil, own_constants=own_constants)
           for ex in exs]
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


def run_processes(ex, x, expected, calls, processes=2):
    """(seconds, CPU seconds) of ``processes`` processes forked from this one, each making
    ``calls`` calls over ``ex`` in one thread (started together; the slowest one's wall
    time, all their CPU time); each checks its results."""
    context = multiprocessing.get_context("fork")
    start_line = context.Barrier(processes)
    results = context.Queue()

    def child():
        start_line.wait()
        results.put(run_threads([ex], x, expected, calls))  # times after its own warm-up

    children = [context.Process(target=child) for _ in range(processes)]
    for c in children:
        c.start()
    measured = [results.get() for _ in children]
    for c in children:
        c.join()
        if c.exitcode != 0:
            raise AssertionError(f"a process exited with code {c.exitcode}")
    return max(m[0] for m in measured), sum(m[1] for m in measured)


def numpy_threads(batch, threads, calls, copies):
    """(seconds, CPU seconds) of ``threads`` threads each computing ``calls`` products
    x @ w0.T (the first layer's matmul) in numpy, on one weight array or a copy each."""
    rng = np.random.default_rng(0)
    x, w = rng.random((batch, 784), dtype=np.float32), rng.random((128, 784), dtype=np.float32)
    ws = [w.copy() if copies else w for _ in range(threads)]

    def work(k):
        weight = ws[k]
        for _ in range(calls):
            np.dot(x, weight.T)

    return timed_threads(threads, work)


def tuned_executable(mod, trials):
    """``mod`` built with its kernels tuned for one core (``trials`` per kernel)."""
    target = "llvm --num-cores=1"
    with tempfile.TemporaryDirectory(prefix="rvm-bench-threads-") as work_dir:
        tasks = ms.relax_integration.extract_tasks(mod, target)
        ms.relax_integration.tune_relax(mod, {}, target, work_dir,
                                        max_trials_global=trials * len(tasks),
                                        max_trials_per_task=trials, num_trials_per_iter=16,
                                        seed=0, progress=False)
        return build(MetaScheduleApplyDatabase(work_dir)(mod), target="llvm")


def thread_rows(ex, suffix, x, expected, calls):
    """The rows of 1, 2 and 4 threads over ``ex``, labelled "<threads><suffix>"."""
    return {f"{n}{suffix}": (lambda n=n: run_threads([ex] * n, x, expected, calls), n,
                             f"1{suffix}")
            for n in (1, 2, 4)}


def parallel_matmul(rows, depth=256, cols=16):
    """A call of a (rows, depth) x (depth, cols) matmul kernel whose row loop is parallel."""
    from rvm import te
    from rvm.tir.stmt import ForKind

    a, w = te.placeholder((rows, depth), name="A"), te.placeholder((depth, cols), name="W")
    r = te.reduce_axis((0, depth), name="r")
    c = te.compute((rows, cols), lambda i, j: te.sum(a[i, r] * w[r, j], axis=r), name="C")
    func = te.create_prim_func([a, w, c])
    func = func.with_body(_parallel_outer(func.body, ForKind.PARALLEL))
    library = rvm.build(func, target="c")
    assert "#pragma omp parallel" in library.get_source()
    kernel = library["main"]
    rng = np.random.default_rng(rows)
    args = [rvm.nd.array(rng.random(shape, dtype=np.float32))
            for shape in ((rows, depth), (depth, cols))]
    args.append(rvm.nd.empty((rows, cols), "float32"))
    return lambda: kernel(*args)


def _parallel_outer(stmt, kind):
    """``stmt`` with its outermost For loop turned into a ``kind`` loop."""
    from rvm.tir.stmt import For
    from rvm.tir.stmt_functor import StmtMutator

    class Outer(StmtMutator):
        done = False

        def visit_for_(self, op):
            if not self.done and isinstance(op, For):
                self.done = True
                return op.with_fields(kind=kind)
            return self._generic(op)

    return Outer().visit(stmt)


def pool_table(rounds):
    """The --competitor table (see the module docstring)."""
    print(f"parallel matmul kernels (rows x 256 @ 256 x 16), per-call times (us); "
          f"{rounds} rounds; {os.cpu_count()} cores")
    print(f"{'rows':>6} {'threads':>8} {'quiet':>9} {'loaded':>9} {'q3/med':>7} {'slowdown':>9}")
    for rows in (64, 1024):
        call = parallel_matmul(rows)
        for count in (1, 2):
            rvm.runtime.set_num_threads(count)
            quiet = alternating_latencies({"k": call}, rounds)["k"]
            with competing_process():
                loaded = alternating_latencies({"k": call}, rounds)["k"]
            quiet_median = quartiles(quiet)[0]
            median, upper = quartiles(loaded)
            print(f"{rows:>6} {count:>8} {quiet_median * 1e6:>9.1f} {median * 1e6:>9.1f} "
                  f"{upper / median:>7.2f} {median / quiet_median:>9.2f}")
    rvm.runtime.set_num_threads(0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--trials", type=int, default=32, help="tuning trials per kernel")
    parser.add_argument("--competitor", action="store_true",
                        help="measure the thread pool quiet and next to a CPU-bound process")
    args = parser.parse_args()
    if args.competitor:
        pool_table(args.rounds)
        return
    params = {k: rvm.nd.array(v) for k, v in mlp_params().items()}

    ex = build(mlp_module(args.batch), target="c", params=params)
    tuned = tuned_executable(BindParams("main", params)(mlp_module(args.batch)), args.trials)
    x = rvm.nd.array(np.random.default_rng(0).random((args.batch, 784), dtype=np.float32))
    expected = VirtualMachine(ex, rvm.cpu())["main"](x).numpy()
    rows = {  # label: (run of one round -> (seconds, CPU seconds), threads, baseline label)
        **thread_rows(ex, "", x, expected, args.calls),
        "2 (GIL held)": (lambda: run_threads([ex] * 2, x, expected, args.calls, False), 2, "1"),
        "2 (own constants)": (lambda: run_threads([ex] * 2, x, expected, args.calls,
                                                  own_constants=True), 2, "1"),
        "2 processes": (lambda: run_processes(ex, x, expected, args.calls), 2, "1"),
        **thread_rows(tuned, " tuned", x, expected, args.calls),
        "2 tuned (own constants)": (lambda: run_threads([tuned] * 2, x, expected, args.calls,
                                                        own_constants=True), 2, "1 tuned"),
        "2 processes tuned": (lambda: run_processes(tuned, x, expected, args.calls), 2,
                              "1 tuned"),
        "numpy 1": (lambda: numpy_threads(args.batch, 1, args.calls, False), 1, "numpy 1"),
        "numpy 2": (lambda: numpy_threads(args.batch, 2, args.calls, False), 2, "numpy 1"),
        "numpy 2 (copies)": (lambda: numpy_threads(args.batch, 2, args.calls, True), 2,
                             "numpy 1"),
    }
    rates, cores = {label: [] for label in rows}, {label: [] for label in rows}
    for _ in range(args.rounds):
        for label, (run, threads, _) in rows.items():
            seconds, cpu = run()
            rates[label].append(threads * args.calls / seconds)
            cores[label].append(cpu / seconds)
    print(f"MLP 784-128-10, batch {args.batch}; {args.calls} calls per thread, exact results; "
          f"median of {args.rounds} rounds; {os.cpu_count()} cores")
    print(f"{'threads':>23} {'calls/s':>10} {'us/call':>9} {'x 1 thread':>11} {'cores':>6}")
    for label, (_, _, base) in rows.items():
        rate = statistics.median(rates[label])
        print(f"{label:>23} {rate:>10.0f} {1e6 / rate:>9.1f} "
              f"{rate / statistics.median(rates[base]):>11.2f} "
              f"{statistics.median(cores[label]):>6.2f}")


if __name__ == "__main__":
    main()
