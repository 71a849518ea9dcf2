"""The thread count of compiled kernels' parallel loops.

Kernels' parallel loops run on rvm's own thread pool (native/src/thread_pool.c),
not on an OpenMP runtime's team: the C compiler outlines a parallel region and
the kernel library hands it to ``RVMBackendParallelLaunch``. The caller and the
pool's workers take the loop's iterations in chunks from a shared counter (see
rvm/codegen/c/polls.py), a worker that starts late (descheduled by another
process) finds the job done and is not waited for. An idle worker spins for the
next job until it has used 20 ms of CPU time, then sleeps (a worker beyond the
process's CPUs: 0.1 ms), so that on a machine whose cores another process keeps
busy the worker is still running when the next region starts, instead of waiting
to be scheduled until the caller has done the region alone. So the count set here holds whatever OpenMP runtime the process
loaded: ``torch.set_num_threads`` or ``omp_set_num_threads`` do not change it.
The default is the number of CPUs the process may run on; a build whose target
has ``-num-cores=N`` uses at most N.

>>> from rvm.runtime import threads
>>> previous = threads.num_threads()
>>> threads.set_num_threads(1)
>>> threads.num_threads()
1
>>> threads.set_num_threads(0)  # back to the default: every CPU the process may use
>>> threads.num_threads() == threads.default_num_threads()
True
"""
import os

from rvm.runtime._ffi import ffi, lib

MAX_THREADS = 1024  # RVM_MAX_THREADS of c_runtime_api.h


def num_threads():
    """The number of threads kernels' parallel loops use (at most)."""
    return int(lib.RVMBackendGetNumThreads())


def default_num_threads():
    """The default thread count: the number of CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def set_num_threads(n):
    """Sets the number of threads of kernels' parallel loops for this process (an int in
    1..1024), or restores the default with 0. Takes effect at the next kernel call."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"set_num_threads expects an int, got {type(n).__name__}")
    if not 0 <= n <= MAX_THREADS:
        raise ValueError(f"set_num_threads expects 0 (the default) to {MAX_THREADS} threads, "
                         f"got {n}")
    if lib.RVMBackendSetNumThreads(n) != 0:  # the checks above make this unreachable
        raise ValueError(ffi.string(lib.RVMGetLastError()).decode())


def config_threadpool(affinity_mode=0, nthreads=None):
    """TVM's ``runtime.config_threadpool``: sets the thread count to ``nthreads`` (None or
    0: the default). ``affinity_mode`` must be 0: rvm does not pin threads to cores."""
    if affinity_mode != 0:
        raise ValueError(f"config_threadpool: affinity_mode must be 0 (threads are not "
                         f"pinned to cores), got {affinity_mode!r}")
    set_num_threads(0 if nthreads is None else nthreads)
