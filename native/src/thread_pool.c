/* The thread pool running generated kernels' parallel regions (RVMBackendParallelLaunch).
 *
 * A kernel's parallel loop is an OpenMP region whose body the C compiler outlines into
 * fn(data); the kernel's own GOMP_parallel (rvm/codegen/c/preamble.py) hands it here, so
 * libgomp's team, barrier and wait policy are never used. Every thread that runs fn takes
 * chunks of the loop's iterations from a shared counter until none is left (see
 * rvm/codegen/c/polls.py), so fn may run on any number of threads, from one up.
 *
 * The caller publishes the job, wakes sleeping workers, and runs fn itself; when its fn
 * returns every chunk has been taken. It then closes the job and waits only for the
 * workers that entered fn (they finish the chunks they hold): a worker that starts late
 * (descheduled by another process) finds the job closed and goes back to waiting, so no
 * region waits for a thread that is not running. One job runs at a time; a caller that
 * finds the pool busy (another thread's kernel) runs fn alone.
 *
 * Between jobs a worker spins (pausing) until it has used RVM_POOL_SPIN_NS of its own CPU
 * time, then sleeps on a condition variable. A sleeping worker must be woken, and when
 * every core is busy (another process holds one) the scheduler runs it only after a time
 * slice: the region is over by then, run by the caller alone, and a model's parallel
 * kernels lose their second thread. A spinning worker stays runnable and enters as soon
 * as it runs, so it must spin through the serial gaps between regions, and through the
 * slices it is descheduled for (which cost no CPU time, so do not count); onnxruntime's
 * workers spin for about 30 ms of CPU. The price: a spinning worker competes for a core with
 * every other runnable thread (the caller's too, when another process holds the other
 * core), which lengthens some calls on an oversubscribed machine. Only the first
 * (CPUs - 1) workers spin that long (the caller takes the remaining CPU): workers beyond
 * the CPUs of the process (a team larger than the machine) spin RVM_POOL_SHORT_SPIN_NS, so
 * an oversubscribed pool does not keep the cores busy. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>

#include "rvm/c_runtime_api.h"
#include "runtime_internal.h"

/* CPU time (its own) a worker spins for the next job before it sleeps: the first
 * (CPUs - 1) workers, and the others (beyond the process's CPUs). */
#define RVM_POOL_SPIN_NS (20 * 1000 * 1000)
#define RVM_POOL_SHORT_SPIN_NS (100 * 1000)
/* Pause-loop iterations between two reads of the thread's CPU clock (a system call). */
#define RVM_POOL_CLOCK_EVERY 256
/* Pause-loop iterations the caller spins for running workers before it yields its core. */
#define RVM_POOL_SPIN 4000

typedef void (*RVMParallelBody)(void*);

static pthread_mutex_t launch_lock = PTHREAD_MUTEX_INITIALIZER; /* one job at a time */
static pthread_mutex_t sleep_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sleep_wake = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;

static RVMParallelBody job_fn = NULL; /* the current job; written only while closed */
static void* job_data = NULL;
static uint64_t generation = 0; /* bumped when a job is published */
static int closed = 1;          /* 1: workers may not enter the current job */
static int active = 0;          /* workers inside (or entering) the current job */
static int joined = 0;          /* workers that entered it */
static int helpers = 0;         /* how many workers the job asks for */
static int sleepers = 0;        /* workers waiting on sleep_wake */
static int workers = 0;         /* workers started */

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

static int64_t thread_cpu_ns(void) {
  struct timespec t;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0) return INT64_MAX; /* stop spinning */
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Returns the generation after `seen`: spins until this thread has used `spin_ns` of CPU
 * time, then sleeps until a job is published. */
static uint64_t wait_for_job(uint64_t seen, int64_t spin_ns) {
  const int64_t start = thread_cpu_ns();
  for (unsigned i = 1;; ++i) {
    uint64_t now = __atomic_load_n(&generation, __ATOMIC_SEQ_CST);
    if (now != seen) return now;
    cpu_relax();
    if (i % RVM_POOL_CLOCK_EVERY == 0) {
      int64_t used = thread_cpu_ns();
      if (used == INT64_MAX || used - start >= spin_ns) break;
    }
  }
  pthread_mutex_lock(&sleep_lock);
  __atomic_add_fetch(&sleepers, 1, __ATOMIC_SEQ_CST);
  uint64_t now;
  while ((now = __atomic_load_n(&generation, __ATOMIC_SEQ_CST)) == seen)
    pthread_cond_wait(&sleep_wake, &sleep_lock);
  __atomic_sub_fetch(&sleepers, 1, __ATOMIC_SEQ_CST);
  pthread_mutex_unlock(&sleep_lock);
  return now;
}

/* arg: the worker's spin budget (ns), set when it starts. */
static void* worker_main(void* arg) {
  const int64_t spin_ns = (int64_t)(intptr_t)arg;
  pthread_setname_np(pthread_self(), "rvm-pool"); /* as top and debuggers show it */
  uint64_t seen = __atomic_load_n(&generation, __ATOMIC_SEQ_CST);
  for (;;) {
    seen = wait_for_job(seen, spin_ns);
    /* Enter the job unless it is closed or has its helpers: announce first (active), then
     * look, so the caller either sees this worker active or this worker sees it closed. */
    __atomic_add_fetch(&active, 1, __ATOMIC_SEQ_CST);
    if (!__atomic_load_n(&closed, __ATOMIC_SEQ_CST) &&
        __atomic_fetch_add(&joined, 1, __ATOMIC_SEQ_CST) < __atomic_load_n(&helpers,
                                                                            __ATOMIC_SEQ_CST)) {
      RVMParallelBody fn = job_fn;
      void* data = job_data;
      fn(data);
    }
    __atomic_sub_fetch(&active, 1, __ATOMIC_SEQ_CST);
  }
  return NULL;
}

/* Starts workers until there are `want`; returns how many there are. */
static int ensure_workers(int want) {
  if (__atomic_load_n(&workers, __ATOMIC_ACQUIRE) >= want) return want;
  pthread_mutex_lock(&start_lock);
  const int cpus = rvm_machine_threads();
  while (workers < want) {
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    /* the caller runs on one CPU, the first workers on the others */
    intptr_t spin_ns = workers + 1 < cpus ? RVM_POOL_SPIN_NS : RVM_POOL_SHORT_SPIN_NS;
    int rc = pthread_create(&thread, &attr, worker_main, (void*)spin_ns);
    pthread_attr_destroy(&attr);
    if (rc != 0) break; /* fewer threads: the job still completes (chunks) */
    __atomic_store_n(&workers, workers + 1, __ATOMIC_RELEASE);
  }
  int have = workers;
  pthread_mutex_unlock(&start_lock);
  return have < want ? have : want;
}

void RVMBackendParallelLaunch(void (*fn)(void*), void* data, unsigned num_threads) {
  int team = num_threads > RVM_MAX_THREADS ? RVM_MAX_THREADS : (int)num_threads;
  if (team <= 1 || pthread_mutex_trylock(&launch_lock) != 0) {
    fn(data); /* alone: the chunk loop takes every chunk */
    return;
  }
  int want = ensure_workers(team - 1);
  if (want > 0) {
    job_fn = fn;
    job_data = data;
    __atomic_store_n(&joined, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&helpers, want, __ATOMIC_SEQ_CST);
    __atomic_store_n(&closed, 0, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&generation, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&sleepers, __ATOMIC_SEQ_CST) > 0) {
      pthread_mutex_lock(&sleep_lock);
      pthread_cond_broadcast(&sleep_wake);
      pthread_mutex_unlock(&sleep_lock);
    }
  }
  fn(data);
  if (want > 0) {
    __atomic_store_n(&closed, 1, __ATOMIC_SEQ_CST);
    for (int i = 0; __atomic_load_n(&active, __ATOMIC_SEQ_CST) != 0; ++i) {
      if (i < RVM_POOL_SPIN) cpu_relax();
      else sched_yield(); /* a worker holding a chunk was descheduled: give it the core */
    }
  }
  pthread_mutex_unlock(&launch_lock);
}

/* A forked child has none of the workers (fork copies only the calling thread): it
 * starts its own, with fresh locks. */
static void forget_workers(void) {
  pthread_mutex_init(&launch_lock, NULL);
  pthread_mutex_init(&sleep_lock, NULL);
  pthread_cond_init(&sleep_wake, NULL);
  pthread_mutex_init(&start_lock, NULL);
  workers = 0;
  sleepers = 0;
  active = 0;
  closed = 1;
}

__attribute__((constructor)) static void rvm_thread_pool_init(void) {
  pthread_atfork(NULL, NULL, forget_workers);
}
