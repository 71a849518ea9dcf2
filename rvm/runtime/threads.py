"""The thread count of compiled kernels' parallel loops, and the OpenMP wait policy.

rvm owns the thread count: every parallel region of a generated kernel asks the
native runtime for its team size (``RVMBackendGetNumThreads``), so the count set
here holds whichever OpenMP runtime the process loaded; ``torch.set_num_threads``
or ``omp_set_num_threads`` do not change it. The default is the number of CPUs
the process may run on; a build whose target has ``-num-cores=N`` uses at most N.

A team's iterations are taken in chunks from a shared counter, so a thread that
starts late (descheduled by another process) finds its share done by the others
(see rvm/codegen/c/polls.py). Waiting threads spin briefly, then sleep: importing
rvm sets ``GOMP_SPINCOUNT`` (rvm.support.env.OPENMP_SPIN_COUNT) unless the user
chose a wait policy or an OpenMP runtime is already loaded (torch imported
first), since libgomp reads it only when it loads.

>>> from rvm.runtime import threads
>>> previous = threads.num_threads()
>>> threads.set_num_threads(1)
>>> threads.num_threads()
1
>>> threads.set_num_threads(0)  # back to the default: every CPU the process may use
>>> threads.num_threads() == threads.default_num_threads()
True
"""
import ctypes
import os

from rvm.runtime._ffi import ffi, lib
from rvm.support import env

MAX_THREADS = 1024  # RVM_MAX_THREADS of c_runtime_api.h


def _openmp_loaded():
    """Whether an OpenMP runtime (libgomp) is already loaded into this process."""
    try:
        ctypes.CDLL("libgomp.so.1", mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
    except OSError:
        return False
    return True


# Set at import, before any kernel library loads libgomp (a no-op when it is loaded already).
WAIT_POLICY_SET = not _openmp_loaded() and env.default_openmp_wait_policy()


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
