"""The fixed head of every generated C translation unit: the packed ABI and helpers.

Generated sources are self-contained (they do not include rvm's headers, which
are not installed with the package), so the declarations below restate the
parts of ``c_runtime_api.h`` and ``dlpack.h`` that kernels use; a test checks
their layout against the real headers.
"""
from rvm.codegen.c.narrow import render_narrow_helpers
from rvm.codegen.c.polls import CHUNKS_PER_THREAD
from rvm.runtime.dtype_table import BASE_TYPES
from rvm.runtime.compiler import VECTOR_MATH_DECLARATIONS

# expf through libmvec's vector form: glibc's vector expf computes every lane of a vector with
# the scalar expf when one argument lies below about -87.3 (its fast range), ~16x the cost per
# element, and a masked softmax (GPT-2's causal mask of -3.4e38) has half its arguments there.
# Below -104 expf is +0 (exp(x) < 2^-150 rounds to 0 from x < -103.97), so those lanes get the
# call on x * 0 (in the fast range for finite x) and then +0; every other lane, subnormal
# results and NaN included, is expf(x) itself. The two tests differ on purpose (a float
# comparison for the argument, the bits for the result): with one condition gcc threads both
# selects through it and calls expf on the unclamped argument, or calls it twice.
EXP_HELPER = r"""
#ifdef RVM_VECTOR_MATH
static inline float rvm_expf(float x) {
  uint32_t bits;
  memcpy(&bits, &x, sizeof bits);
  const float y = expf(x < -104.0f ? x * 0.0f : x);
  return bits > 0xC2D00000u && bits <= 0xFF800000u ? 0.0f : y; /* x in [-inf, -104) */
}
#else
#define rvm_expf expf
#endif
"""

ABI_DECLARATIONS = r"""
typedef struct { int32_t device_type; int32_t device_id; } DLDevice;
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } DLDataType;
typedef struct {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
} DLTensor;
typedef union {
  int64_t v_int64;
  double v_float64;
  void* v_handle;
  const char* v_str;
  DLDataType v_type;
  DLDevice v_device;
} RVMValue;
typedef struct RVMObject {
  uint32_t type_index;
  int32_t ref_count;
  void (*deleter)(struct RVMObject* self);
} RVMObject;
typedef struct RVMNDArray {
  RVMObject header;
  DLTensor dl;
} RVMNDArray;
enum {
  kRVMNull = 0, kRVMInt = 1, kRVMFloat = 2, kRVMBool = 3, kRVMStr = 4,
  kRVMOpaqueHandle = 6, kRVMDLTensorHandle = 7, kRVMNDArrayHandle = 10
};
/* cold: a path that sets an error leaves the kernel, so gcc predicts every check on entry
 * as passing; otherwise each lowers the estimated count of the loops after it, and with
 * enough of them (tensor parameters, overflow checks) gcc compiles a matmul's register
 * tile as cold code: not unrolled, its accumulators in memory. */
extern void RVMAPISetLastError(const char* msg) __attribute__((cold));
extern int RVMFuncGetGlobal(const char* name, RVMObject** out);
extern int RVMFuncCall(RVMObject* func, RVMValue* args, int* type_codes, int num_args,
                       RVMValue* ret, int* ret_code);
extern void RVMValueRelease(RVMValue value, int type_code);
enum { kRVMCancelNone = 0, kRVMCancelInterrupt = 1, kRVMCancelTimeout = 2 };
typedef struct RVMKernelContext {
  int32_t cancel;
  int32_t reserved;
  int64_t polls_left;
  int64_t refused;
  void* budget;
  int64_t step_limit;
  double time_limit;
} RVMKernelContext;
extern RVMKernelContext* RVMBackendGetContext(void);
extern void* RVMBackendAllocWorkspace(RVMKernelContext* ctx, int64_t nbytes);
extern void RVMBackendFreeWorkspace(RVMKernelContext* ctx, void* ptr);
extern int RVMBackendWorkspaceError(RVMKernelContext* ctx, const char* kernel);
extern int RVMBackendKernelStopped(RVMKernelContext* ctx, const char* kernel, int64_t polls,
                                   int64_t cap);
extern int RVMBackendGetNumThreads(void);
"""

HELPERS_TEMPLATE = r"""
#define RVM_EXPORT __attribute__((visibility("default")))
#define RVM_UNLIKELY(x) __builtin_expect(!!(x), 0)

%(dtype_name)s
static DLTensor* rvm_arg_tensor(const char* kernel, const char* param, RVMValue v, int code) {
  char msg[512];
  if (code == kRVMDLTensorHandle) return (DLTensor*)v.v_handle;
  if (code == kRVMNDArrayHandle) return &((RVMNDArray*)v.v_handle)->dl;
  snprintf(msg, sizeof(msg), "TypeError: %s: parameter '%s' expects a tensor, got type code %d",
           kernel, param, code);
  RVMAPISetLastError(msg);
  return NULL;
}

/* Checks rank, dtype, device and compactness of a tensor argument. */
static int rvm_check_tensor(const char* kernel, const char* param, const DLTensor* t, int ndim,
                            uint8_t code, uint8_t bits, const char* expect) {
  char msg[640], got[32];
  if (t->ndim != ndim) {
    snprintf(msg, sizeof(msg), "ValueError: %s: parameter '%s' expects %s (rank %d), "
             "got a tensor of rank %d", kernel, param, expect, ndim, (int)t->ndim);
    RVMAPISetLastError(msg);
    return -1;
  }
  int dtype_ok = t->dtype.lanes == 1 && t->dtype.code == code && t->dtype.bits == bits;
  /* older DLPack producers spell bool as uint1 */
  if (code == 6 && t->dtype.lanes == 1 && t->dtype.code == 1 && t->dtype.bits == 1)
    dtype_ok = 1;
  if (!dtype_ok) {
    snprintf(msg, sizeof(msg), "TypeError: %s: parameter '%s' expects %s, got dtype %s",
             kernel, param, expect, rvm_dtype_name(t->dtype, got, sizeof(got)));
    RVMAPISetLastError(msg);
    return -1;
  }
  if (t->device.device_type != 1) {
    snprintf(msg, sizeof(msg), "ValueError: %s: parameter '%s' must be on cpu, got device "
             "type %d", kernel, param, (int)t->device.device_type);
    RVMAPISetLastError(msg);
    return -1;
  }
  if (t->strides != NULL) {
    int64_t expected = 1;
    for (int i = ndim - 1; i >= 0; --i) {
      if (t->shape[i] != 1 && t->strides[i] != expected) {
        snprintf(msg, sizeof(msg), "ValueError: %s: parameter '%s' must be compact row-major, "
                 "got stride %lld on axis %d (expected %lld)", kernel, param,
                 (long long)t->strides[i], i, (long long)expected);
        RVMAPISetLastError(msg);
        return -1;
      }
      expected *= t->shape[i];
    }
  }
  return 0;
}

static int rvm_shape_error(const char* kernel, const char* param, int axis, const char* expect,
                           const char* what, long long want, long long got) {
  char msg[768], num[32];
  snprintf(num, sizeof(num), "%lld", want);
  if (strcmp(num, what) == 0)
    snprintf(msg, sizeof(msg), "ValueError: %s: parameter '%s' expects shape %s, got %lld on "
             "axis %d (expected %lld)", kernel, param, expect, got, axis, want);
  else
    snprintf(msg, sizeof(msg), "ValueError: %s: parameter '%s' expects shape %s, got %lld on "
             "axis %d (expected %s = %lld)", kernel, param, expect, got, axis, what, want);
  RVMAPISetLastError(msg);
  return -1;
}

static int rvm_scalar_error(const char* kernel, const char* param, const char* expect, int code) {
  char msg[512];
  snprintf(msg, sizeof(msg), "TypeError: %s: parameter '%s' expects %s, got type code %d",
           kernel, param, expect, code);
  RVMAPISetLastError(msg);
  return -1;
}

/* Bounds of generated kernels: element counts, the out-of-bounds flag, checked arithmetic. */
static inline int64_t rvm_numel(const DLTensor* t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}
static inline int rvm_oob_hit(int* flag, int code) {
  __atomic_store_n(flag, code, __ATOMIC_RELAXED);
  return 0;
}
#ifdef _OPENMP
/* The C compiler outlines a parallel region into fn(data) and calls GOMP_parallel: this
 * kernel library's own, which runs it on rvm's thread pool instead of libgomp's. */
extern void RVMBackendParallelLaunch(void (*fn)(void*), void* data, unsigned num_threads);
__attribute__((visibility("hidden"))) void GOMP_parallel(void (*fn)(void*), void* data,
                                                         unsigned num_threads, unsigned flags) {
  (void)flags;
  RVMBackendParallelLaunch(fn, data, num_threads);
}
#endif
/* A parallel loop's team: the runtime's thread count, capped by the build's (cap > 0) and
 * by the n iterations; and the chunks its threads take in turn (rvm/codegen/c/polls.py). */
static inline int rvm_team(uint64_t n, int cap) {
#ifdef _OPENMP
  int team = RVMBackendGetNumThreads();
  if (cap > 0 && cap < team) team = cap;
  if ((uint64_t)team > n) team = (int)n;
  return team < 1 ? 1 : team;
#else
  (void)n; (void)cap;
  return 1;
#endif
}
static inline uint64_t rvm_chunk_size(uint64_t n, int team) {
  uint64_t chunks = team > 1 ? (uint64_t)team * %(chunks_per_thread)d : 1;
  if (chunks > n) chunks = n > 0 ? n : 1;
  return n / chunks + (n % chunks != 0);
}
/* Takes the next chunk [*first, *last) of n iterations; 0 when none is left. */
static inline int rvm_take_chunk(uint64_t* next, uint64_t n, uint64_t chunk, uint64_t* first,
                                 uint64_t* last) {
  const uint64_t index = __atomic_fetch_add(next, 1, __ATOMIC_RELAXED);
  if (chunk == 0 || index > (n - 1) / chunk) return 0; /* chunk >= 1 implies n >= 1 */
  *first = index * chunk; /* <= n - 1: no overflow */
  *last = n - *first > chunk ? *first + chunk : n;
  return 1;
}
/* A kernel loop's poll: one more against the run's step budget, and the cancel flag.
   The flag is read as a volatile int (the READ_ONCE idiom), not with __atomic_load_n: gcc
   treats an atomic builtin as touching all memory, so a poll in a loop kept a register
   tile of accumulators in memory (every FMA a load and a store to the stack). */
#define RVM_CANCELLED() (*(volatile const int32_t*)&rvm_ctx->cancel != 0)
#define RVM_POLL() RVM_UNLIKELY(++rvm_polls > rvm_poll_cap || RVM_CANCELLED())
/* A strip's poll: its n iterations against the budget, and the cancel flag. */
#define RVM_POLL_N(n) RVM_UNLIKELY((rvm_polls += (n)) > rvm_poll_cap || RVM_CANCELLED())
#define RVM_STOPPED() RVM_UNLIKELY(rvm_polls > rvm_poll_cap || RVM_CANCELLED())
static inline int64_t rvm_cmul(int64_t a, int64_t b, int* overflow) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) *overflow = 1;
  return r;
}
static inline int64_t rvm_cadd(int64_t a, int64_t b, int* overflow) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) *overflow = 1;
  return r;
}
static inline int rvm_dim_error(const char* kernel, const char* param, int axis, long long got,
                                const char* dtype) {
  char msg[640];
  snprintf(msg, sizeof(msg), "ValueError: %s: parameter '%s' has %lld on axis %d, which does "
           "not fit the kernel's %s dimension variable", kernel, param, got, axis, dtype);
  RVMAPISetLastError(msg);
  return -1;
}

/* Integer division never traps: x / 0 and x % 0 are 0, INT64_MIN / -1 wraps. */
static inline int64_t rvm_div(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return (int64_t)(0 - (uint64_t)a);
  return a / b;
}
static inline int64_t rvm_mod(int64_t a, int64_t b) {
  return (b == 0 || b == -1) ? 0 : a % b;
}
static inline uint64_t rvm_udiv(uint64_t a, uint64_t b) { return b == 0 ? 0 : a / b; }
static inline uint64_t rvm_umod(uint64_t a, uint64_t b) { return b == 0 ? 0 : a % b; }
static inline int64_t rvm_floordiv(int64_t a, int64_t b) {
  int64_t q = rvm_div(a, b);
  return (b != 0 && a % (b == -1 ? 1 : b) != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static inline int64_t rvm_floormod(int64_t a, int64_t b) {
  int64_t r = rvm_mod(a, b);
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
"""


def _dtype_name_function():
    """``rvm_dtype_name``: a DLPack dtype's name, from the table rvm's DataType reads."""
    cases = "\n".join(f"  if (t.code == {code} && t.bits == {bits}) base = \"{name}\";"
                      for name, (code, bits) in BASE_TYPES.items())
    return ("static const char* rvm_dtype_name(DLDataType t, char* buf, size_t size) {\n"
            "  const char* base = \"unknown\";\n" + cases + "\n"
            "  if (t.code == 1 && t.bits == 1) base = \"bool\";\n"
            "  if (t.lanes == 1) snprintf(buf, size, \"%s\", base);\n"
            "  else snprintf(buf, size, \"%sx%d\", base, (int)t.lanes);\n"
            "  return buf;\n}\n")


HELPERS = HELPERS_TEMPLATE.replace("%(dtype_name)s", _dtype_name_function()).replace(
    "%(chunks_per_thread)d", str(CHUNKS_PER_THREAD))


# First in the unit, so every function (the headers' inline ones too) has the same options.
# gcc's -O3 unroll-and-jam fuses two iterations of a register tile's reduction loop into its
# vector loop once nothing leaves the reduction loop (no poll in it, see polls.py): the
# vector loop is then too large to unroll fully and the tile's accumulators live in memory
# (a load and a store per FMA). Compilers other than gcc ignore the pragma.
NO_UNROLL_AND_JAM = '#pragma GCC optimize ("no-loop-unroll-and-jam")\n'


def render_preamble(use_openmp):
    """The includes, ABI declarations and helper functions every kernel source starts with.

    The OpenMP pragmas need no header; ``use_openmp`` only notes in the source
    whether parallel loops are compiled with OpenMP. The vector forms of a few math
    functions are declared when the compiler links glibc's libmvec (``RVM_VECTOR_MATH``,
    rvm.runtime.compiler.VECTOR_MATH_FLAGS); float32 ``exp`` calls ``rvm_expf``
    (``EXP_HELPER``), which keeps the vector form on its fast path.
    """
    includes = ["stdint.h", "stddef.h", "stdbool.h", "stdio.h", "stdlib.h", "string.h",
                "math.h"]
    head = "\n".join(f"#include <{name}>" for name in includes)
    mode = "OpenMP parallel loops" if use_openmp else "serial (no OpenMP)"
    return (f"/* generated by rvm: packed-ABI kernels; {mode} */\n" + NO_UNROLL_AND_JAM + head
            + "\n" + VECTOR_MATH_DECLARATIONS + EXP_HELPER
            + ABI_DECLARATIONS + HELPERS + render_narrow_helpers())
