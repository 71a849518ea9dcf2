/* The backend API of generated kernels (c_runtime_api.h): the context a kernel reads on
 * entry, its workspace allocations charged to the running VM's memory_limit, and the
 * cancellation of its loops by the VM's limits.
 *
 * Each VM state holds one RVMKernelContext. Both engines make it the current context of
 * their thread for a run (rvm_kernel_context_enter/exit); a kernel called directly from
 * Python reads its thread's own context, which has no budget and is never cancelled.
 *
 * Who sets cancel: a watchdog thread, started the first time a VM with a time_limit runs,
 * when a run's deadline passes; and a SIGINT handler, installed in front of Python's own
 * (which it then calls, so Python still sees the signal) while a run is in progress on the
 * main thread. */
#include <stdio.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vm_engine.h"

static __thread RVMKernelContext* current = NULL;
static __thread RVMKernelContext own = {.polls_left = INT64_MAX};

RVMKernelContext* RVMBackendGetContext(void) { return current != NULL ? current : &own; }

/* ---- workspace ---- */

typedef struct {
  int64_t nbytes;
  RVMVMState* budget;
} WorkspaceHeader; /* in the first RVM_ALLOC_ALIGNMENT bytes of the block */

void* RVMBackendAllocWorkspace(RVMKernelContext* ctx, int64_t nbytes) {
  RVMVMState* budget = (RVMVMState*)ctx->budget;
  if (nbytes < 0 || nbytes > INT64_MAX - 2 * RVM_ALLOC_ALIGNMENT) {
    __atomic_store_n(&ctx->refused, -1, __ATOMIC_RELAXED);
    return NULL;
  }
  if (budget != NULL && budget->memory_limit != 0 &&
      rvm_vm_claim(budget, nbytes, "kernel workspace") != 0) {
    __atomic_store_n(&ctx->refused, nbytes, __ATOMIC_RELAXED);
    return NULL;
  }
  char* block = (char*)rvm_aligned_alloc((size_t)nbytes + RVM_ALLOC_ALIGNMENT);
  if (block == NULL) {
    if (budget != NULL && budget->memory_limit != 0)
      __atomic_sub_fetch(&budget->in_use, nbytes, __ATOMIC_RELAXED);
    __atomic_store_n(&ctx->refused, -1, __ATOMIC_RELAXED);
    return NULL;
  }
  WorkspaceHeader* head = (WorkspaceHeader*)block;
  head->nbytes = nbytes;
  head->budget = budget != NULL && budget->memory_limit != 0 ? budget : NULL;
  return block + RVM_ALLOC_ALIGNMENT;
}

void RVMBackendFreeWorkspace(RVMKernelContext* ctx, void* ptr) {
  if (ptr == NULL) return;
  char* block = (char*)ptr - RVM_ALLOC_ALIGNMENT;
  WorkspaceHeader* head = (WorkspaceHeader*)block;
  if (head->budget != NULL)
    __atomic_sub_fetch(&head->budget->in_use, head->nbytes, __ATOMIC_RELAXED);
  free(block);
}

int RVMBackendWorkspaceError(RVMKernelContext* ctx, const char* kernel) {
  int64_t refused = __atomic_load_n(&ctx->refused, __ATOMIC_RELAXED);
  RVMVMState* budget = (RVMVMState*)ctx->budget;
  if (refused > 0 && budget != NULL && budget->memory_limit != 0) {
    rvm_set_error("MemoryError: %s: %lld more bytes would exceed the VM's memory_limit of %lld "
                  "bytes (%lld in use)", kernel, (long long)refused,
                  (long long)budget->memory_limit,
                  (long long)__atomic_load_n(&budget->in_use, __ATOMIC_RELAXED));
  } else {
    rvm_set_error("MemoryError: %s: out of memory", kernel);
  }
  return -1;
}

/* ---- stopping ---- */

#define STEP_MESSAGE                                                                        \
  "RuntimeError: VM run exceeded its step_limit of %lld steps in kernel '%s' (a kernel's "  \
  "step is %d iterations of its outer loops and its long inner loops): an endless loop? "  \
  "Pass a "                                                                                 \
  "larger step_limit to VirtualMachine, or None for no limit"
#define TIME_MESSAGE "TimeoutError: VM run exceeded its time_limit of %g s%s%s%s"
#define INTERRUPT_MESSAGE "KeyboardInterrupt: kernel '%s' interrupted"

int RVMBackendKernelStopped(RVMKernelContext* ctx, const char* kernel, int64_t polls,
                            int64_t cap) {
  int reason = __atomic_load_n(&ctx->cancel, __ATOMIC_RELAXED);
  if (polls > cap) {
    rvm_set_error(STEP_MESSAGE, (long long)ctx->step_limit, kernel, RVM_KERNEL_POLLS_PER_STEP);
  } else if (reason == kRVMCancelTimeout) {
    rvm_set_error(TIME_MESSAGE, ctx->time_limit, " (in kernel '", kernel, "')");
  } else {
    rvm_set_error(INTERRUPT_MESSAGE, kernel);
  }
  return -1;
}

int rvm_kernel_context_raise(RVMKernelContext* ctx) {
  int reason = __atomic_load_n(&ctx->cancel, __ATOMIC_RELAXED);
  if (reason == kRVMCancelTimeout) {
    char msg[128];
    snprintf(msg, sizeof(msg), TIME_MESSAGE + strlen("TimeoutError: "), ctx->time_limit, "", "",
             "");
    PyErr_SetString(PyExc_TimeoutError, msg);
    return -1;
  }
  if (PyErr_CheckSignals() != 0) return -1; /* Python's handler of the SIGINT */
  PyErr_SetString(PyExc_KeyboardInterrupt, "VM run interrupted");
  return -1;
}

/* ---- the watchdog of time limits ---- */

typedef struct {
  RVMKernelContext* ctx;
  struct timespec deadline;
} Deadline;

static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t watch_wake;
static int watch_started = 0;
static Deadline* deadlines = NULL;
static int num_deadlines = 0, cap_deadlines = 0;

static int before(const struct timespec* a, const struct timespec* b) {
  return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static void* watchdog(void* unused) {
  pthread_mutex_lock(&watch_lock);
  for (;;) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    const struct timespec* next = NULL;
    for (int i = 0; i < num_deadlines; ++i) {
      if (!before(&now, &deadlines[i].deadline))
        __atomic_store_n(&deadlines[i].ctx->cancel, kRVMCancelTimeout, __ATOMIC_RELAXED);
      else if (next == NULL || before(&deadlines[i].deadline, next))
        next = &deadlines[i].deadline;
    }
    if (next == NULL) pthread_cond_wait(&watch_wake, &watch_lock);
    else pthread_cond_timedwait(&watch_wake, &watch_lock, next);
  }
  return NULL;
}

/* Watches ctx's deadline, time_limit seconds from now; 0, or -1 (no error set). */
static int watch(RVMKernelContext* ctx, double seconds) {
  struct timespec at;
  clock_gettime(CLOCK_MONOTONIC, &at);
  double whole = (double)(int64_t)seconds;
  at.tv_sec += (time_t)whole;
  at.tv_nsec += (long)((seconds - whole) * 1e9);
  if (at.tv_nsec >= 1000000000L) {
    at.tv_sec += 1;
    at.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&watch_lock);
  int rc = 0;
  if (!watch_started) {
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&watch_wake, &attr);
    pthread_condattr_destroy(&attr);
    pthread_t thread;
    pthread_attr_t tattr;
    pthread_attr_init(&tattr);
    pthread_attr_setdetachstate(&tattr, PTHREAD_CREATE_DETACHED);
    rc = pthread_create(&thread, &tattr, watchdog, NULL) == 0 ? 0 : -1;
    pthread_attr_destroy(&tattr);
    watch_started = rc == 0;
  }
  if (rc == 0 && num_deadlines == cap_deadlines) {
    int cap = cap_deadlines ? cap_deadlines * 2 : 8;
    Deadline* grown = (Deadline*)realloc(deadlines, sizeof(Deadline) * (size_t)cap);
    if (grown == NULL) rc = -1;
    else {
      deadlines = grown;
      cap_deadlines = cap;
    }
  }
  if (rc == 0) {
    deadlines[num_deadlines++] = (Deadline){ctx, at};
    pthread_cond_signal(&watch_wake);
  }
  pthread_mutex_unlock(&watch_lock);
  return rc;
}

static void unwatch(RVMKernelContext* ctx) {
  pthread_mutex_lock(&watch_lock);
  for (int i = 0; i < num_deadlines; ++i) {
    if (deadlines[i].ctx == ctx) {
      deadlines[i] = deadlines[--num_deadlines];
      break;
    }
  }
  pthread_mutex_unlock(&watch_lock);
}

/* ---- SIGINT ---- */

static RVMKernelContext* volatile sigint_ctx = NULL; /* the main thread's run, if any */
static PyOS_sighandler_t python_handler = NULL;
static unsigned long main_thread = 0;

static void on_sigint(int sig) {
  RVMKernelContext* ctx = sigint_ctx;
  if (ctx != NULL) __atomic_store_n(&ctx->cancel, kRVMCancelInterrupt, __ATOMIC_RELAXED);
  if (python_handler != NULL) python_handler(sig);
}

/* Puts on_sigint in front of the handler Python installed (again, if Python replaced it
 * since: signal.signal installs its own); a default or ignored SIGINT is left alone. Asking
 * the kernel which handler is installed costs a system call (about 0.4 us, more than a
 * small run), so a run asks only when the last ask is ARM_RECHECK_NS old: a handler
 * installed by signal.signal less than that before a run is seen from the next run on. */
#define ARM_RECHECK_NS 50000000
static void arm_sigint(void) {
  static int64_t last_check = INT64_MIN / 2;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
  if (now - last_check < ARM_RECHECK_NS) return;
  last_check = now;
  PyOS_sighandler_t handler = PyOS_getsig(SIGINT);
  if (handler == on_sigint || handler == SIG_DFL || handler == SIG_IGN || handler == SIG_ERR)
    return;
  python_handler = handler;
  PyOS_setsig(SIGINT, on_sigint);
}

/* ---- runs ---- */

RVMKernelContext* rvm_kernel_context_enter(RVMVMState* state) {
  RVMKernelContext* previous = current;
  RVMKernelContext* ctx = &state->kernels;
  if (previous == ctx) return previous; /* a run nested in one of the same VM */
  ctx->cancel = kRVMCancelNone;
  ctx->refused = 0;
  ctx->polls_left = ctx->step_limit == 0 || ctx->step_limit > INT64_MAX / RVM_KERNEL_POLLS_PER_STEP
                        ? INT64_MAX
                        : ctx->step_limit * RVM_KERNEL_POLLS_PER_STEP;
  current = ctx;
  if (ctx->time_limit > 0 && watch(ctx, ctx->time_limit) != 0)
    ctx->cancel = kRVMCancelTimeout; /* no watchdog: stop at once rather than never */
  if (main_thread != 0 && PyThread_get_thread_ident() == main_thread) {
    arm_sigint();
    sigint_ctx = ctx;
  }
  return previous;
}

void rvm_kernel_context_exit(RVMVMState* state, RVMKernelContext* previous) {
  RVMKernelContext* ctx = &state->kernels;
  if (previous == ctx) return;
  if (ctx->time_limit > 0) unwatch(ctx);
  if (main_thread != 0 && PyThread_get_thread_ident() == main_thread) sigint_ctx = previous;
  current = previous;
}

/* A forked child has no watchdog thread (fork copies only the calling thread): its first
 * run with a time_limit starts one, with no deadline inherited. */
static void forget_watchdog(void) {
  pthread_mutex_init(&watch_lock, NULL);
  watch_started = 0;
  num_deadlines = 0;
}

int rvm_kernel_context_install(void) {
  pthread_atfork(NULL, NULL, forget_watchdog);
  main_thread = PyThread_get_thread_ident();
  PyObject* threading = PyImport_ImportModule("threading");
  PyObject* main = threading != NULL ? PyObject_CallMethod(threading, "main_thread", NULL) : NULL;
  PyObject* ident = main != NULL ? PyObject_GetAttrString(main, "ident") : NULL;
  if (ident != NULL) main_thread = PyLong_AsUnsignedLong(ident);
  Py_XDECREF(ident);
  Py_XDECREF(main);
  Py_XDECREF(threading);
  return PyErr_Occurred() ? -1 : 0;
}
