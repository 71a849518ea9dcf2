/* Calls of C and Python callees from the native engine's loop, plain and observed
 * (an instrument around each call site, a profile timing each). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "vm_engine.h"

void rvm_vm_arg(RVMVirtualMachine* vm, const RVMVMLinkedInstr* ins, size_t base, int k,
                RVMValue* v, int* code) {
  const RVMVMLinkedArg* a = &vm->args[ins->first_arg + k];
  if (a->kind == kRVMLinkedReg) {
    *v = vm->reg_values[base + (size_t)a->index];
    *code = vm->reg_codes[base + (size_t)a->index];
  } else {
    *v = vm->values[a->index];
    *code = vm->value_codes[a->index];
  }
}

/* The arguments of ins as new Python references in argv[0, nargs); -1 on error. */
static int py_args(RVMVirtualMachine* vm, const RVMVMLinkedInstr* ins, size_t base,
                   PyObject** argv) {
  for (int k = 0; k < ins->nargs; ++k) {
    const RVMVMLinkedArg* a = &vm->args[ins->first_arg + k];
    if (a->kind == kRVMLinkedValue) {
      argv[k] = PyList_GET_ITEM(vm->value_list, a->index);
      Py_INCREF(argv[k]);
      continue;
    }
    size_t r = base + (size_t)a->index;
    argv[k] = rvm_value_to_py(vm->reg_values[r], vm->reg_codes[r], 0);
    if (argv[k] == NULL) {
      while (k-- > 0) Py_DECREF(argv[k]);
      return -1;
    }
  }
  return 0;
}

/* Calls fn with extra leading arguments and those of ins; a new reference or NULL. */
static PyObject* call_py(RVMVirtualMachine* vm, PyObject* fn, PyObject* const* lead, int nlead,
                         const RVMVMLinkedInstr* ins, size_t base) {
  rvm_vm_hold_gil(vm);
  PyObject* stack[RVM_VM_STACK_ARGS];
  size_t n = (size_t)(nlead + ins->nargs);
  PyObject** argv = n <= RVM_VM_STACK_ARGS ? stack : PyMem_Malloc(sizeof(PyObject*) * n);
  if (argv == NULL) return PyErr_NoMemory();
  if (nlead > 0) memcpy(argv, lead, sizeof(PyObject*) * (size_t)nlead);
  PyObject* res = NULL;
  if (py_args(vm, ins, base, argv + nlead) == 0) {
    res = PyObject_Vectorcall(fn, argv, n, NULL);
    for (int k = 0; k < ins->nargs; ++k) Py_DECREF(argv[nlead + k]);
  }
  if (argv != stack) PyMem_Free(argv);
  return res;
}

static int from_result(PyObject* res, RVMValue* ret, int* ret_code) {
  if (res == NULL) return -1;
  int rc = rvm_vm_from_py(res, ret, ret_code);
  Py_DECREF(res);
  return rc;
}

/* Scratch space for the arguments of one C call: on the C stack for the usual few. Boxed
 * Python values are converted to their packed form for the call (then released). */
typedef struct {
  RVMValue values[RVM_VM_STACK_ARGS];
  int codes[RVM_VM_STACK_ARGS];
  RVMValue* av;
  int* ac;
  RVMByteArray* bytes; /* when boxed: per argument, what bytes point into */
  PyObject** keep;     /* ... the replacement objects of the bridge's conversion */
  char* converted;     /* ... which arguments were converted */
} CArgs;

static int c_args(CArgs* s, int n) {
  s->av = s->values;
  s->ac = s->codes;
  s->bytes = NULL;
  s->keep = NULL;
  s->converted = NULL;
  if (n <= RVM_VM_STACK_ARGS) return 0;
  s->av = (RVMValue*)malloc(sizeof(RVMValue) * (size_t)n);
  s->ac = (int*)malloc(sizeof(int) * (size_t)n);
  return s->av == NULL || s->ac == NULL ? -1 : 0;
}

/* Converts the boxed arguments (the GIL is held). */
static int unbox(CArgs* s, int n) {
  s->bytes = (RVMByteArray*)calloc((size_t)n, sizeof(RVMByteArray));
  s->keep = (PyObject**)calloc((size_t)n, sizeof(PyObject*));
  s->converted = (char*)calloc((size_t)n, 1);
  if (s->bytes == NULL || s->keep == NULL || s->converted == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  ArgSlots tmp = {s->av, s->ac, s->bytes, s->keep};
  for (int k = 0; k < n; ++k) {
    if (!rvm_is_py_box(s->av[k], s->ac[k])) continue;
    PyObject* obj = rvm_py_box_object((RVMObject*)s->av[k].v_handle);
    if (rvm_py_to_value(obj, &tmp, k, NULL, 0) != 0) return -1;
    s->converted[k] = 1;
  }
  return 0;
}

static void free_c_args(CArgs* s, int n) {
  for (int k = 0; s->converted != NULL && k < n; ++k) {
    if (!s->converted[k]) continue;
    RVMValueRelease(s->av[k], s->ac[k]);
    Py_XDECREF(s->keep[k]);
  }
  if (s->av != s->values) {
    free(s->av);
    free(s->ac);
  }
  free(s->bytes);
  free(s->keep);
  free(s->converted);
}

static int call_c(RVMVirtualMachine* vm, RVMVMFunc* f, const RVMVMLinkedInstr* ins,
                  size_t base, RVMValue* ret, int* ret_code) {
  int n = ins->nargs, boxed = 0, rc = 0;
  CArgs s;
  if (c_args(&s, n) != 0) {
    free_c_args(&s, 0);
    rvm_vm_hold_gil(vm);
    PyErr_NoMemory();
    return -1;
  }
  for (int k = 0; k < n; ++k) {
    rvm_vm_arg(vm, ins, base, k, &s.av[k], &s.ac[k]);
    boxed |= rvm_is_py_box(s.av[k], s.ac[k]);
  }
  if (boxed) {
    rvm_vm_hold_gil(vm); /* the conversion runs Python code; the GIL stays for this call */
    rc = unbox(&s, n);
  } else if (vm->release_gil && vm->released == NULL) {
    vm->released = PyEval_SaveThread();
  }
  if (rc == 0) {
    ret->v_int64 = 0;
    *ret_code = kRVMNull;
    if (f->cfunc(s.av, s.ac, n, ret, ret_code, f->resource) != 0) {
      rvm_vm_hold_gil(vm);
      rvm_raise_last_error();
      rc = -1;
    } else if (*ret_code == kRVMStr || *ret_code == kRVMBytes ||
               *ret_code == kRVMDLTensorHandle) {
      rvm_vm_hold_gil(vm);
      rc = rvm_vm_own_result(ret, ret_code);
    }
  }
  if (boxed || n > RVM_VM_STACK_ARGS) free_c_args(&s, n);
  return rc;
}

/* Runs the callee of ins into ret without storing it. */
static int invoke(RVMVirtualMachine* vm, RVMVMFunc* f, const RVMVMLinkedInstr* ins, size_t base,
                  RVMValue* ret, int* ret_code) {
  if (f->kind == kRVMCalleeC) return call_c(vm, f, ins, base, ret, ret_code);
  return from_result(call_py(vm, f->py, NULL, 0, ins, base), ret, ret_code);
}

int rvm_vm_call(RVMVirtualMachine* vm, RVMVMFunc* f, const RVMVMLinkedInstr* ins, size_t base) {
  RVMValue ret;
  int ret_code;
  if (invoke(vm, f, ins, base, &ret, &ret_code) != 0) return -1;
  rvm_vm_set_reg(vm, base, ins->dst, ret, ret_code);
  return 0;
}


/* instrument(func, name, before, ret, *args); 1 when it answers SKIP_RUN (1) before. */
static int notify(RVMVirtualMachine* vm, RVMVMFunc* f, const RVMVMLinkedInstr* ins, size_t base,
                  PyObject* ret) {
  PyObject* name = PyUnicode_FromString(f->name);
  if (name == NULL) return -1;
  PyObject* lead[4] = {f->py, name, ret == NULL ? Py_True : Py_False,
                       ret == NULL ? Py_None : ret};
  PyObject* instrument = vm->instrument;
  Py_INCREF(instrument); /* it may remove itself while it runs */
  PyObject* answer = call_py(vm, instrument, lead, 4, ins, base);
  Py_DECREF(instrument);
  Py_DECREF(name);
  if (answer == NULL) return -1;
  int skip = ret == NULL && PyLong_Check(answer) && PyLong_AsLong(answer) == 1;
  Py_DECREF(answer);
  return skip;
}

int rvm_vm_call_observed(RVMVirtualMachine* vm, int32_t pc, size_t base) {
  const RVMVMLinkedInstr* ins = &vm->code[pc];
  RVMVMFunc* f = &vm->funcs[ins->callee];
  RVMValue ret = {.v_int64 = 0};
  int ret_code = kRVMNull, skip = 0, rc = 0;
  if (vm->instrument != NULL) skip = notify(vm, f, ins, base, NULL);
  if (skip < 0) return -1;
  if (!skip) {
    int64_t start = rvm_vm_ticks();
    /* a closure runs through the Python builtin here, so its whole call is observed */
    rc = f->kind == kRVMCalleeC ? call_c(vm, f, ins, base, &ret, &ret_code)
                                : from_result(call_py(vm, f->py, NULL, 0, ins, base), &ret,
                                              &ret_code);
    if (rc == 0 && vm->profile != NULL) {
      vm->profile[2 * pc] += 1;
      vm->profile[2 * pc + 1] += rvm_vm_ticks() - start;
    }
  }
  if (rc == 0 && !skip && vm->instrument != NULL) {
    rvm_vm_hold_gil(vm);
    PyObject* result = rvm_value_to_py(ret, ret_code, 0);
    rc = result == NULL ? -1 : notify(vm, f, ins, base, result) < 0 ? -1 : 0;
    Py_XDECREF(result);
    if (rc != 0) RVMValueRelease(ret, ret_code);
  }
  if (rc == 0) rvm_vm_set_reg(vm, base, ins->dst, ret, ret_code);
  return rc;
}
