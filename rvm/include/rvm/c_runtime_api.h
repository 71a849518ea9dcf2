/*
 * rvm C runtime API: the one calling convention shared by compiled kernels,
 * VM builtins, user C libraries and Python callbacks.
 *
 * A packed function receives its arguments as parallel arrays of values and
 * type codes and writes its result the same way:
 *
 *   int fn(RVMValue* args, int* type_codes, int num_args,
 *          RVMValue* ret, int* ret_code, void* resource);
 *
 * It returns 0 on success; on failure it calls RVMAPISetLastError(message)
 * and returns non-zero. A message starting with a Python exception name
 * ("ValueError: ...", "TypeError: ...") surfaces in Python as that type.
 *
 * Ownership:
 *  - arguments are borrowed for the duration of the call; a callee that keeps
 *    an object beyond it calls RVMObjectRetain;
 *  - a returned object (NDArray, function, shape, array, object) hands one
 *    reference to the caller; a returned string or byte array stays valid
 *    until the callee's thread makes its next packed call, so copy it.
 *
 * A shared library registers functions when it is loaded:
 *
 *   static int MyAdd(RVMValue* args, int* codes, int n, RVMValue* ret,
 *                    int* ret_code, void* resource) {
 *     ret->v_int64 = args[0].v_int64 + args[1].v_int64;
 *     *ret_code = kRVMInt;
 *     return 0;
 *   }
 *   RVM_REGISTER_GLOBAL("myadd", MyAdd);
 */
#ifndef RVM_C_RUNTIME_API_H_
#define RVM_C_RUNTIME_API_H_

#include <stddef.h>
#include <stdint.h>

#include "dlpack.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RVM_DLL __attribute__((visibility("default")))

/* Type codes of packed-call values. */
typedef enum {
  kRVMNull = 0,
  kRVMInt = 1,              /* v_int64 */
  kRVMFloat = 2,            /* v_float64 */
  kRVMBool = 3,             /* v_int64, 0 or 1 */
  kRVMStr = 4,              /* v_str, NUL-terminated UTF-8 */
  kRVMBytes = 5,            /* v_handle -> RVMByteArray */
  kRVMOpaqueHandle = 6,     /* v_handle, an address C code gives meaning to */
  kRVMDLTensorHandle = 7,   /* v_handle -> DLTensor, borrowed, no ownership */
  kRVMDataType = 8,         /* v_type */
  kRVMDevice = 9,           /* v_device */
  kRVMNDArrayHandle = 10,   /* v_handle -> RVMNDArray (refcounted) */
  kRVMPackedFuncHandle = 11,/* v_handle -> function object (refcounted) */
  kRVMShapeHandle = 12,     /* v_handle -> RVMShape (refcounted) */
  kRVMArrayHandle = 13,     /* v_handle -> RVMArray (refcounted) */
  kRVMObjectHandle = 14,    /* v_handle -> any other RVMObject */
} RVMTypeCode;

typedef union {
  int64_t v_int64;
  double v_float64;
  void* v_handle;
  const char* v_str;
  DLDataType v_type;
  DLDevice v_device;
} RVMValue;

typedef struct {
  const char* data;
  size_t size;
} RVMByteArray;

/* Every runtime object starts with this header. */
typedef struct RVMObject {
  uint32_t type_index; /* an RVMObjectTypeIndex */
  int32_t ref_count;
  void (*deleter)(struct RVMObject* self);
} RVMObject;

typedef enum {
  kRVMObjectNDArray = 1,
  kRVMObjectFunction = 2,
  kRVMObjectShape = 3,
  kRVMObjectArray = 4,
  kRVMObjectStorage = 5,   /* a raw allocation NDArrays may view */
  kRVMObjectPython = 6,    /* a Python object carried through C unchanged */
  kRVMObjectDLPack = 7,    /* keeps an imported DLManagedTensor alive */
  kRVMObjectVMState = 8,   /* a virtual machine's devices and storage pools (C builtins' vm) */
  kRVMObjectUserBegin = 64,
} RVMObjectTypeIndex;

typedef RVMObject* RVMObjectHandle;
typedef RVMObject* RVMFunctionHandle;

/* A tensor: its DLTensor view plus the object owning its memory. */
typedef struct RVMNDArray {
  RVMObject header;
  DLTensor dl;
  RVMObject* owner;      /* NULL: dl.data came from RVMArrayAlloc and is freed with it */
  void* py_object;       /* the Python object wrapping this tensor while one exists (not a
                          * reference: the wrapper clears it when it goes), else NULL */
  int64_t shape_data[];  /* dl.shape points here */
} RVMNDArray;

typedef struct RVMShape {
  RVMObject header;
  int64_t ndim;
  int64_t data[];
} RVMShape;

typedef struct RVMArray {
  RVMObject header;
  int64_t size;
  int* type_codes;       /* points after values, in the same allocation */
  RVMValue values[];
} RVMArray;

typedef int (*RVMPackedCFunc)(RVMValue* args, int* type_codes, int num_args, RVMValue* ret,
                              int* ret_code, void* resource);
typedef void (*RVMResourceFinalizer)(void* resource);

/* ---- errors (thread-local) ---- */
RVM_DLL void RVMAPISetLastError(const char* msg);
RVM_DLL const char* RVMGetLastError(void);

/* ---- objects ---- */
RVM_DLL int RVMObjectRetain(RVMObjectHandle obj);
RVM_DLL int RVMObjectFree(RVMObjectHandle obj);
/* Release the reference held by a value if its code is an object code. */
RVM_DLL void RVMValueRelease(RVMValue value, int type_code);

/* ---- functions and the global registry ---- */
RVM_DLL int RVMFuncCreateFromCFunc(RVMPackedCFunc func, void* resource, RVMResourceFinalizer fin,
                                   RVMFunctionHandle* out);
RVM_DLL int RVMFuncCall(RVMFunctionHandle func, RVMValue* args, int* type_codes, int num_args,
                        RVMValue* ret, int* ret_code);
RVM_DLL int RVMFuncFree(RVMFunctionHandle func);
/* Registers f under name; fails if the name is taken and override is 0. */
RVM_DLL int RVMFuncRegisterGlobal(const char* name, RVMFunctionHandle f, int override);
/* *out is a new reference, or NULL when no function has that name. */
RVM_DLL int RVMFuncGetGlobal(const char* name, RVMFunctionHandle* out);
RVM_DLL int RVMFuncRemoveGlobal(const char* name);
/* The names stay valid until this thread calls it again. */
RVM_DLL int RVMFuncListGlobalNames(int* out_size, const char*** out_names);
/* Used by RVM_REGISTER_GLOBAL: registers at library load time; a failure is
 * kept and reported by the loader (rvm.runtime.load_library). */
RVM_DLL void RVMFuncRegisterGlobalAtLoad(const char* name, RVMPackedCFunc func);

/* ---- tensors, shapes, arrays ---- */
/* A new compact row-major tensor, 64-byte aligned. */
RVM_DLL int RVMArrayAlloc(const int64_t* shape, int ndim, DLDataType dtype, DLDevice device,
                          RVMNDArray** out);
/* A tensor viewing owner's memory at data (retains owner); when owner is a tensor, the
 * view's bytes must lie inside the bytes that tensor owns (ValueError otherwise). */
RVM_DLL int RVMNDArrayCreateView(RVMObject* owner, void* data, const int64_t* shape, int ndim,
                                 DLDataType dtype, DLDevice device, RVMNDArray** out);
/* Takes over a DLPack tensor (calls its deleter when the last reference goes). */
RVM_DLL int RVMNDArrayFromDLPack(DLManagedTensor* managed, RVMNDArray** out);
/* A DLPack tensor sharing memory with arr (holds a reference to it). */
RVM_DLL int RVMNDArrayToDLPack(RVMNDArray* arr, DLManagedTensor** out);
/* The DLPack 1.0 forms of the two above; read-only tensors are refused on import. */
RVM_DLL int RVMNDArrayFromDLPackVersioned(DLManagedTensorVersioned* managed, RVMNDArray** out);
RVM_DLL int RVMNDArrayToDLPackVersioned(RVMNDArray* arr, DLManagedTensorVersioned** out);
RVM_DLL int RVMShapeCreate(const int64_t* dims, int64_t ndim, RVMShape** out);
/* An array of n values; object values are retained, strings and bytes copied. */
RVM_DLL int RVMArrayCreate(const RVMValue* values, const int* type_codes, int64_t n,
                           RVMArray** out);

/* Number of bytes of a compact tensor of this shape and dtype; -1 when a dimension is
 * negative or the size overflows int64. */
RVM_DLL int64_t RVMDataSize(const int64_t* shape, int ndim, DLDataType dtype);

/* ---- the backend API of generated kernels: workspace and cancellation ----
 *
 * A kernel reads the context of the run it belongs to once on entry
 * (RVMBackendGetContext: the running VM's when a VM runs on this thread, else
 * this thread's own, with no budget). Its heap allocations go through
 * RVMBackendAllocWorkspace, charged to that VM's memory_limit while they live.
 * Its loops poll at outer back-edges: a poll counts one against polls_left and
 * reads cancel, which the runtime sets from another thread or a signal handler
 * (the VM's time_limit, Ctrl-C); a kernel that stops reports why through
 * RVMBackendKernelStopped. */
typedef enum {
  kRVMCancelNone = 0,
  kRVMCancelInterrupt = 1, /* SIGINT while the run was in progress */
  kRVMCancelTimeout = 2,   /* the VM's time_limit passed */
} RVMCancelReason;

/* Kernel polls per step of a VM's step_limit. */
#define RVM_KERNEL_POLLS_PER_STEP 1024

typedef struct RVMKernelContext {
  int32_t cancel;       /* an RVMCancelReason; nonzero: kernels stop at their next poll */
  int32_t reserved;
  int64_t polls_left;   /* polls the kernels of the current run may still take */
  int64_t refused;      /* the last workspace request refused (bytes; -1: malloc failed) */
  void* budget;         /* the VM state whose memory_limit workspaces count against, or NULL */
  int64_t step_limit;   /* the limits of that VM (0: none), for the messages */
  double time_limit;
} RVMKernelContext;

RVM_DLL RVMKernelContext* RVMBackendGetContext(void);
/* nbytes of 64-byte aligned memory charged to ctx's budget; NULL when refused or out of
 * memory (RVMBackendWorkspaceError then says which). */
RVM_DLL void* RVMBackendAllocWorkspace(RVMKernelContext* ctx, int64_t nbytes);
RVM_DLL void RVMBackendFreeWorkspace(RVMKernelContext* ctx, void* ptr);
/* Sets the error of a failed workspace allocation of kernel; returns -1. */
RVM_DLL int RVMBackendWorkspaceError(RVMKernelContext* ctx, const char* kernel);
/* Sets the error of a kernel that stopped at a poll (polls taken, cap the polls it was
 * allowed): past the step limit, the time limit, or interrupted; returns -1. */
RVM_DLL int RVMBackendKernelStopped(RVMKernelContext* ctx, const char* kernel, int64_t polls,
                                    int64_t cap);

/* ---- the thread count of kernels' parallel loops ----
 *
 * Every parallel region of a generated kernel runs on at most RVMBackendGetNumThreads()
 * threads (fewer when the build's target caps it with -num-cores, or when the loop has
 * fewer iterations). RVMBackendSetNumThreads(n) sets it for the process; 0 restores the
 * default, the number of CPUs the process may run on. Returns -1 (and sets the last
 * error) when n is negative or above RVM_MAX_THREADS. */
#define RVM_MAX_THREADS 1024
RVM_DLL int RVMBackendGetNumThreads(void);
RVM_DLL int RVMBackendSetNumThreads(int n);
/* Runs fn(data) on up to num_threads threads of rvm's pool, the caller among them, and
 * returns when every thread that entered fn has left it. fn must complete the work
 * whichever number of threads runs it (kernels' chunk loops do): a worker that starts
 * late does not enter a job the others have finished. Generated kernels reach it through
 * their own GOMP_parallel, which the C compiler calls for an OpenMP parallel region. */
RVM_DLL void RVMBackendParallelLaunch(void (*fn)(void*), void* data, unsigned num_threads);

#define RVM_STR_CONCAT_(a, b) a##b
#define RVM_STR_CONCAT(a, b) RVM_STR_CONCAT_(a, b)

/* Registers fn (an RVMPackedCFunc) as a global function when the library loads. */
#define RVM_REGISTER_GLOBAL(name, fn)                                                 \
  static void __attribute__((constructor)) RVM_STR_CONCAT(rvm_register_, __LINE__)(void) { \
    RVMFuncRegisterGlobalAtLoad(name, fn);                                            \
  }

#ifdef __cplusplus
}
#endif
#endif /* RVM_C_RUNTIME_API_H_ */
