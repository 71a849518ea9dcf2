/*
 * The native VM engine: an interpreter over pre-decoded bytecode.
 *
 * At construction every VM function's instruction words are decoded (and
 * checked) once into an array of RVMVMInstr with per-instruction argument
 * templates, and every function-table entry is resolved into a callee of the
 * pool: another VM function (a frame is pushed on a flat stack, no C
 * recursion), a native builtin, a C packed function (kernels are direct
 * function pointers) or a Python callable.
 *
 * Registers are RVMValue + type code pairs owning their object references. A
 * Python value with no native form (a str, a tuple from Python, any object)
 * lives in a register as a box (an RVMObject of type kRVMObjectPython) and is
 * converted only when a C callee needs it.
 *
 * Native builtins run the common cases; when their arguments are anything
 * else, or a check fails, they answer RVM_VM_DEFER and the engine calls the
 * Python implementation of the builtin with the same arguments, so errors
 * carry exactly the Python engine's messages.
 *
 * The engine holds the GIL throughout: Python callees may run at any call.
 */
#ifndef RVM_VM_ENGINE_H_
#define RVM_VM_ENGINE_H_

#include "py_bridge.h"

#define RVM_VM_MAX_CALL_DEPTH 100000
#define RVM_VM_DEFER 1        /* a native builtin's answer: run the Python implementation */
#define RVM_VM_STACK_ARGS 16  /* arguments of a call held on the C stack */

typedef enum {
  kVMOpCallVM = 0,
  kVMOpCallNative,
  kVMOpCallC,
  kVMOpCallPy,
  kVMOpRet,
  kVMOpGoto,
  kVMOpIf,
  kVMOpInvoke, /* vm.builtin.invoke_closure: a frame for this VM's closures */
} RVMVMOp;

typedef enum {
  kVMCalleeVM = 0,
  kVMCalleeNative = 1,
  kVMCalleeC = 2,
  kVMCalleePy = 3,
  kVMCalleeInvoke = 4,
} RVMVMCalleeKind;

/* Argument kinds of the bytecode (rvm.bytecode.opcodes.ArgKind). */
enum { kVMArgReg = 0, kVMArgImm, kVMArgConst, kVMArgFunc, kVMArgVoid, kVMArgVMState };

typedef struct {
  int32_t op;
  int32_t dst;        /* register, or -1 to discard the result */
  int32_t callee;     /* CALL: pool index; RET, IF: the register read */
  int32_t target;     /* GOTO, IF: function-relative instruction index */
  int32_t nargs;
  int32_t first_arg;  /* into the function's argument templates */
  int32_t nregs;      /* arguments read from registers ... */
  int32_t first_reg;  /* ... listed from here in the function's reg_slots */
} RVMVMInstr;

typedef struct {
  int32_t pos; /* argument position */
  int32_t reg;
} RVMVMRegSlot;

typedef struct {
  char* name;
  int is_vm;
  int32_t num_args;
  int32_t num_regs;
  int32_t num_instrs;
  int64_t num_arg_slots;
  RVMVMInstr* code;
  RVMValue* arg_values;  /* argument templates: immediates, constants, functions filled in */
  int* arg_codes;
  PyObject** arg_py;     /* the same as Python objects (borrowed), NULL for registers */
  RVMVMRegSlot* reg_slots;
} RVMVMFunc;

struct RVMVirtualMachine;
typedef int (*RVMVMNativeFn)(struct RVMVirtualMachine* vm, RVMValue* args, int* codes, int n,
                             RVMValue* ret, int* ret_code);

typedef struct {
  int kind;
  PyObject* py;          /* Python callable (for natives: the Python implementation) */
  PyObject* packed;      /* PackedFunc standing for it as a value, or NULL */
  RVMObject* handle;     /* its C function object (borrowed from packed) */
  RVMPackedCFunc cfunc;  /* C callees: the entry point and its resource */
  void* resource;
  RVMVMNativeFn native;
  RVMObject* box;        /* VM functions: their closure (py) as a value, boxed */
} RVMVMCallee;

typedef struct {
  int32_t fidx;
  int32_t pc;
  int32_t ret_dst; /* caller's destination register, in the caller's frame */
  size_t base;     /* first register in the register stack */
} RVMVMFrame;

/* A raw allocation tensors are carved out of; free when only its pool holds it. */
typedef struct {
  RVMObject header;
  void* data;
  int64_t nbytes;
  DLDevice device;
} RVMVMStorage;

typedef struct {
  int64_t size;
  RVMVMStorage** items;
  int32_t count, cap, cursor;
} RVMVMSizeClass;

typedef struct {
  int naive;
  DLDevice device;
  RVMVMSizeClass* classes;
  int32_t num_classes, cap;
  int64_t requests, allocations, bytes_allocated;
} RVMVMStoragePool;

typedef struct RVMVirtualMachine {
  int32_t num_funcs;
  RVMVMFunc* funcs;
  RVMVMCallee* pool;
  int32_t num_consts;
  RVMValue* const_values;
  int* const_codes;
  RVMByteArray* const_bytes; /* what bytes constants point to */
  PyObject* const_list;  /* the Python constants (str constants point into them) */
  PyObject* vm;          /* the Python VirtualMachine (the VM-state argument of Python callees) */
  PyObject* describe;    /* (func index, pc, depth) -> position note of an error */
  PyObject* truth;       /* IF on a value that is not a bool/int */
  PyObject* to_runtime;  /* entry conversion of numpy values */
  PyObject* check_args;  /* (func index, args) -> raises the argument-count error */
  PyObject* fallback;    /* (func index, args) -> the Python engine's result */
  PyObject* numpy_types; /* tuple of types converted at entry by to_runtime */
  PyObject* closure_type; /* VMClosure */
  RVMValue* reg_values;  /* register stack shared by the frames of all runs */
  int* reg_codes;
  size_t reg_cap, reg_top;
  RVMVMFrame* frames;
  size_t frame_cap, frame_top;
  int32_t num_devices;
  RVMVMStoragePool* pools;
  int use_python;        /* run on the Python engine (instrumentation is on) */
  int release_gil;       /* C callees run without the GIL */
  uint32_t backward_jumps;
  int32_t active_runs;   /* runs in progress (nested ones through Python callees) ... */
  unsigned long thread;  /* ... all on this thread */
} RVMVirtualMachine;

/* ---- vm_load.c ---- */
int rvm_vm_decode_function(RVMVirtualMachine* vm, int32_t index, PyObject* words);
void rvm_vm_free(RVMVirtualMachine* vm);

/* ---- vm_interp.c ---- */
/* Runs VM function fidx on n Python arguments; a new reference or NULL with an error. */
PyObject* rvm_vm_run(RVMVirtualMachine* vm, int32_t fidx, PyObject* const* args, Py_ssize_t n);

/* Internal steps of the loop, shared with vm_closure.c. */
int rvm_vm_call_python(RVMVirtualMachine* vm, PyObject* fn, RVMVMFunc* f, RVMVMInstr* ins,
                       size_t base, RVMValue* ret, int* ret_code);
void rvm_vm_set_reg(RVMVirtualMachine* vm, size_t base, int32_t dst, RVMValue v, int code);
/* Room for regs more registers and one more frame. */
int rvm_vm_reserve(RVMVirtualMachine* vm, size_t regs);

/* ---- vm_closure.c ---- */
/* Pushes the frame of a closure of this VM (1), or calls the Python builtin and stores its
 * result (0); -1 on error. */
int rvm_vm_invoke_closure(RVMVirtualMachine* vm, RVMVMFunc* f, RVMVMInstr* ins, size_t base,
                          size_t frame0);

/* ---- vm_convert.c ---- */
/* Python -> register value (new reference); boxes anything without a native form. */
int rvm_vm_from_py(PyObject* obj, RVMValue* v, int* code);
/* The same for arguments from Python: numpy arrays and scalars are converted first. */
int rvm_vm_arg_from_py(RVMVirtualMachine* vm, PyObject* obj, RVMValue* v, int* code);
/* Register value -> Python (new reference); steal: the value's reference passes to it. */
PyObject* rvm_vm_to_py(RVMVirtualMachine* vm, RVMValue v, int code, int steal);
/* Replaces a returned string or borrowed tensor (valid during the call only) by a value
 * the register owns. */
int rvm_vm_own_result(RVMValue* v, int* code);
RVMObject* rvm_vm_box(PyObject* obj);
PyObject* rvm_vm_box_object(RVMObject* box); /* borrowed */
int rvm_vm_is_box(RVMValue v, int code);

/* ---- vm_builtins.c ---- */
RVMVMNativeFn rvm_vm_find_builtin(const char* name);

/* ---- vm_storage.c ---- */
int rvm_vm_pool_init(RVMVMStoragePool* pool, int naive, DLDevice device);
void rvm_vm_pool_free(RVMVMStoragePool* pool);
/* A storage of at least nbytes (new reference), or NULL with a Python error set. */
RVMVMStorage* rvm_vm_pool_alloc(RVMVMStoragePool* pool, int64_t nbytes);
int rvm_vm_is_storage(RVMValue v, int code);

/* ---- py_vm.c ---- */
extern PyTypeObject RVMNativeVMType;
extern PyTypeObject RVMNativeEntryType;
/* Adds NativeVM to the bridge module (called by rvm_bridge_install). */
int rvm_vm_install(PyObject* module);

#endif /* RVM_VM_ENGINE_H_ */
