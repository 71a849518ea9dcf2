/* The thread count of generated kernels' parallel loops, owned by rvm.
 *
 * A kernel's parallel region asks RVMBackendGetNumThreads for its team size (see
 * rvm/codegen/c/polls.py), so the count set here holds whichever OpenMP runtime the
 * process loaded (torch's libgomp included: omp_set_num_threads does not reach it).
 * 0 means "not set": the default is the number of CPUs this process may run on. */
#define _GNU_SOURCE
#include <sched.h>
#include <unistd.h>

#include "rvm/c_runtime_api.h"
#include "runtime_internal.h"

static int num_threads = 0; /* set by RVMBackendSetNumThreads; 0: the default */
static int default_threads = 0; /* cached on first use */

int rvm_machine_threads(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

int RVMBackendGetNumThreads(void) {
  int n = __atomic_load_n(&num_threads, __ATOMIC_RELAXED);
  if (n > 0) return n;
  n = __atomic_load_n(&default_threads, __ATOMIC_RELAXED);
  if (n == 0) {
    n = rvm_machine_threads();
    __atomic_store_n(&default_threads, n, __ATOMIC_RELAXED);
  }
  return n;
}

int RVMBackendSetNumThreads(int n) {
  if (n < 0 || n > RVM_MAX_THREADS) {
    RVMAPISetLastError("ValueError: the number of threads must be between 0 (the default: "
                       "every CPU this process may use) and 1024");
    return -1;
  }
  __atomic_store_n(&num_threads, n, __ATOMIC_RELAXED);
  return 0;
}
