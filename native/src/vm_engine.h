/*
 * The native VM engine: the interpreter loop over the linked form of rvm.vm.link.
 *
 * Python links an executable once (callees resolved and classified, argument
 * templates, absolute jump targets) and hands the engine flat arrays laid out as
 * the contract's structs (rvm_vm_contract.h, generated from
 * rvm/bytecode/contract.py). vm_link.c checks every index in them once; the loop
 * then reads them without checks.
 *
 * Registers are RVMValue + type code pairs owning their references; a Python
 * value with no native form lives in a register as a box (kRVMObjectPython).
 *
 * The GIL: the loop takes it only for Python work (Python callees, boxes,
 * instruments, errors, returning to Python). With release_gil, the first C
 * callee (kernel or C builtin) releases it, and it stays released across C
 * callees, VM calls and jumps until Python work needs it again; deleters of
 * objects that hold Python references take the GIL themselves.
 */
#ifndef RVM_VM_ENGINE_H_
#define RVM_VM_ENGINE_H_

#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "py_bridge.h"
#include "rvm_vm_contract.h"

#define RVM_VM_STACK_ARGS 16 /* arguments of a call held on the C stack */

/* One function-table entry. */
typedef struct {
  char* name;
  int32_t kind;             /* CalleeKind */
  int32_t start, end;       /* VM functions: their instructions */
  int32_t num_args, num_regs;
  PyObject* py;             /* the callee as a Python object */
  RVMObject* handle;        /* C callees: the function object (retained) ... */
  RVMPackedCFunc cfunc;     /* ... its entry point and resource */
  void* resource;
} RVMVMFunc;

typedef struct {
  int32_t fidx;
  int32_t pc;      /* absolute; the caller's CALL while a callee runs */
  int32_t ret_dst; /* caller's destination register, in the caller's frame */
  size_t base;     /* first register in the register stack */
} RVMVMFrame;

struct RVMVMState;

/* A raw allocation tensors are carved out of; free when only its pool holds it. */
typedef struct {
  RVMObject header;
  void* data;
  int64_t nbytes;
  DLDevice device;
  struct RVMVMState* owner; /* naive storages: the state whose in_use counts them (retained) */
} RVMVMStorage;

typedef struct {
  int64_t size;
  RVMVMStorage** items;
  int32_t count, cap, cursor;
} RVMVMSizeClass;

typedef struct {
  int naive;
  struct RVMVMState* state; /* the state holding this pool */
  DLDevice device;
  RVMVMSizeClass* classes;
  int32_t num_classes, cap;
  int64_t requests, allocations, bytes_allocated;
} RVMVMStoragePool;

/* The VM state object: what C builtins receive as their vm argument. */
typedef struct RVMVMState {
  RVMObject header;
  int64_t memory_limit;     /* bytes the pools may hold at once; 0: no limit */
  int64_t in_use;           /* bytes they hold (atomic: naive storages die on any thread) */
  RVMKernelContext kernels; /* what kernels of this VM's runs read (kernel_context.c) */
  int32_t num_devices;
  RVMVMStoragePool pools[];
} RVMVMState;

typedef struct RVMVirtualMachine {
  /* the linked program (vm_link.c) */
  int32_t num_funcs;
  RVMVMFunc* funcs;
  int32_t num_code;
  RVMVMLinkedInstr* code;
  int64_t num_args;
  RVMVMLinkedArg* args;
  int32_t num_values;
  RVMValue* values;          /* owned; strings and bytes point into value_list */
  int* value_codes;
  RVMByteArray* value_bytes;
  PyObject* value_list;      /* the same values as Python objects */
  RVMObject* state;          /* the RVMVMState */
  /* EngineHooks (rvm.vm.native) */
  PyObject* pyvm;
  PyObject* describe;
  PyObject* truth;
  PyObject* check_args;
  PyObject* closure_type;
  /* observation: a callback and timers per call site, only while set */
  PyObject* instrument;
  int64_t* profile;          /* per instruction: calls, ticks */
  int64_t profile_ticks, profile_ns; /* the clocks when the profile started */
  /* running */
  RVMValue* reg_values;      /* register stack shared by the frames of all runs */
  int* reg_codes;
  size_t reg_cap, reg_top;
  RVMVMFrame* frames;
  size_t frame_cap, frame_top;
  int release_gil;           /* C callees run without the GIL */
  PyThreadState* released;   /* non-NULL while the loop runs without the GIL */
  uint32_t backward_jumps;
  int64_t step_limit;        /* steps per run (STEP_LIMIT_MESSAGE); 0: no limit */
  int32_t active_runs;       /* runs in progress (nested ones through Python callees) ... */
  unsigned long thread;      /* ... all on this thread */
} RVMVirtualMachine;

/* A fast clock for profiles: the time-stamp counter where there is one (converted with
 * the rate measured over the profile), else nanoseconds. */
static inline int64_t rvm_vm_ticks(void) {
#if defined(__x86_64__) || defined(__i386__)
  return (int64_t)__rdtsc();
#else
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
#endif
}

/* Takes the GIL back if the loop released it. */
static inline void rvm_vm_hold_gil(RVMVirtualMachine* vm) {
  if (vm->released != NULL) {
    PyEval_RestoreThread(vm->released);
    vm->released = NULL;
  }
}

/* ---- vm_link.c ---- */
/* Fills vm from the linked form; a Python error naming what is wrong. */
int rvm_vm_link(RVMVirtualMachine* vm, PyObject* hooks, PyObject* functions, PyObject* code,
                PyObject* args, PyObject* values, PyObject* state);
void rvm_vm_free(RVMVirtualMachine* vm);

/* ---- vm_interp.c ---- */
/* Runs VM function fidx on n Python arguments; a new reference or NULL with an error. */
PyObject* rvm_vm_run(RVMVirtualMachine* vm, int32_t fidx, PyObject* const* args, Py_ssize_t n);
/* Room for regs more registers and one more frame; -1 (no error set) when out of memory. */
int rvm_vm_reserve(RVMVirtualMachine* vm, size_t regs);
void rvm_vm_set_reg(RVMVirtualMachine* vm, size_t base, int32_t dst, RVMValue v, int code);
/* Pushes a frame for VM function fidx whose registers [base, base + num_args) are filled. */
void rvm_vm_push_frame(RVMVirtualMachine* vm, int32_t fidx, int32_t ret_dst, size_t base);

/* ---- vm_call.c ---- */
/* The value of argument k of the CALL ins (borrowed). */
void rvm_vm_arg(RVMVirtualMachine* vm, const RVMVMLinkedInstr* ins, size_t base, int k,
                RVMValue* v, int* code);
/* Calls a C or Python callee with the arguments of ins, storing the result; -1 on error. */
int rvm_vm_call(RVMVirtualMachine* vm, RVMVMFunc* f, const RVMVMLinkedInstr* ins, size_t base);
/* The same under the instrument and the profile. */
int rvm_vm_call_observed(RVMVirtualMachine* vm, int32_t pc, size_t base);

/* ---- vm_closure.c ---- */
/* Pushes the frame of a closure of this VM (1), or calls the callee as Python (0); -1. */
int rvm_vm_invoke_closure(RVMVirtualMachine* vm, const RVMVMLinkedInstr* ins, size_t base,
                          size_t frame0);

/* ---- vm_convert.c ---- */
/* Python -> register value (new reference); boxes anything without a native form. */
int rvm_vm_from_py(PyObject* obj, RVMValue* v, int* code);
/* Replaces a returned string or borrowed tensor (valid during the call only) by a value the
 * register owns. */
int rvm_vm_own_result(RVMValue* v, int* code);

/* ---- vm_storage.c ---- */
/* Counts nbytes more in use by state; 0, or -1 with the memory_limit error naming what. */
int rvm_vm_claim(RVMVMState* state, int64_t nbytes, const char* what);
/* memory_limit: bytes the state's pools may hold at once (0: no limit). */
RVMVMState* rvm_vm_state_new(int32_t num_devices, int naive, int64_t memory_limit);
RVMVMState* rvm_vm_state_of(RVMValue v, int code);    /* NULL: not a VM state */
RVMVMStorage* rvm_vm_storage_of(RVMValue v, int code); /* NULL: not a storage */
/* A storage of at least nbytes (new reference), or NULL with the last error set. */
RVMVMStorage* rvm_vm_pool_alloc(RVMVMStoragePool* pool, int64_t nbytes);

/* ---- kernel_context.c ---- */
/* Makes state's kernel context this thread's for a run (limits reset unless the run is
 * nested in one of the same VM); returns the context to restore. */
RVMKernelContext* rvm_kernel_context_enter(RVMVMState* state);
void rvm_kernel_context_exit(RVMVMState* state, RVMKernelContext* previous);
/* Raises (GIL held) the error of a cancelled run (ctx->cancel nonzero); returns -1. */
int rvm_kernel_context_raise(RVMKernelContext* ctx);
/* Notes the main thread (whose runs Ctrl-C cancels); -1 with a Python error. */
int rvm_kernel_context_install(void);

/* ---- vm_builtins.c ---- */
int rvm_vm_register_builtins(void);

/* ---- py_vm.c ---- */
int rvm_vm_install(PyObject* module);

#endif /* RVM_VM_ENGINE_H_ */
