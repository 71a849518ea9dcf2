/* The native engine's interpreter loop, its calls and the value conversions
 * at the Python boundary. */
#include <stdlib.h>
#include <string.h>

#include "vm_engine.h"

void rvm_vm_set_reg(RVMVirtualMachine* vm, size_t base, int32_t dst, RVMValue v, int code) {
  if (dst < 0) {
    RVMValueRelease(v, code);
    return;
  }
  RVMValue old = vm->reg_values[base + dst];
  int old_code = vm->reg_codes[base + dst];
  vm->reg_values[base + dst] = v;
  vm->reg_codes[base + dst] = code;
  RVMValueRelease(old, old_code);
}

int rvm_vm_reserve(RVMVirtualMachine* vm, size_t regs) {
  size_t need = vm->reg_top + regs;
  if (need > vm->reg_cap) {
    size_t cap = vm->reg_cap ? vm->reg_cap : 256;
    while (cap < need) cap *= 2;
    RVMValue* values = (RVMValue*)realloc(vm->reg_values, sizeof(RVMValue) * cap);
    if (values == NULL) goto oom;
    vm->reg_values = values;
    int* codes = (int*)realloc(vm->reg_codes, sizeof(int) * cap);
    if (codes == NULL) goto oom;
    vm->reg_codes = codes;
    vm->reg_cap = cap;
  }
  if (vm->frame_top + 1 > vm->frame_cap) {
    size_t cap = vm->frame_cap ? vm->frame_cap * 2 : 64;
    RVMVMFrame* frames = (RVMVMFrame*)realloc(vm->frames, sizeof(RVMVMFrame) * cap);
    if (frames == NULL) goto oom;
    vm->frames = frames;
    vm->frame_cap = cap;
  }
  return 0;
oom:
  PyErr_NoMemory();
  return -1;
}

/* Calls a Python callable with the instruction's arguments. */
int rvm_vm_call_python(RVMVirtualMachine* vm, PyObject* fn, RVMVMFunc* f, RVMVMInstr* ins,
                       size_t base, RVMValue* ret, int* ret_code) {
  PyObject* stack[RVM_VM_STACK_ARGS];
  int n = ins->nargs;
  PyObject** argv =
      n <= RVM_VM_STACK_ARGS ? stack : (PyObject**)PyMem_Malloc(sizeof(PyObject*) * (size_t)n);
  if (argv == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  memcpy(argv, f->arg_py + ins->first_arg, sizeof(PyObject*) * (size_t)n);
  RVMVMRegSlot* slots = f->reg_slots + ins->first_reg;
  int built = 0, rc = -1;
  for (; built < ins->nregs; ++built) {
    size_t r = base + (size_t)slots[built].reg;
    PyObject* obj = rvm_vm_to_py(vm, vm->reg_values[r], vm->reg_codes[r], 0);
    if (obj == NULL) goto out;
    argv[slots[built].pos] = obj;
  }
  PyObject* res = PyObject_Vectorcall(fn, argv, (size_t)n, NULL);
  if (res != NULL) {
    rc = rvm_vm_from_py(res, ret, ret_code);
    Py_DECREF(res);
  }
out:
  for (int k = 0; k < built; ++k) Py_DECREF(argv[slots[k].pos]);
  if (argv != stack) PyMem_Free(argv);
  return rc;
}

/* Calls a native builtin or a C packed function with the instruction's arguments. */
static int call_c(RVMVirtualMachine* vm, RVMVMCallee* c, RVMVMFunc* f, RVMVMInstr* ins,
                  size_t base, RVMValue* ret, int* ret_code) {
  RVMValue values_stack[RVM_VM_STACK_ARGS];
  int codes_stack[RVM_VM_STACK_ARGS];
  int n = ins->nargs;
  RVMValue* av = values_stack;
  int* ac = codes_stack;
  if (n > RVM_VM_STACK_ARGS) {
    av = (RVMValue*)PyMem_Malloc(sizeof(RVMValue) * (size_t)n);
    ac = (int*)PyMem_Malloc(sizeof(int) * (size_t)n);
    if (av == NULL || ac == NULL) {
      PyMem_Free(av);
      PyMem_Free(ac);
      PyErr_NoMemory();
      return -1;
    }
  }
  memcpy(av, f->arg_values + ins->first_arg, sizeof(RVMValue) * (size_t)n);
  memcpy(ac, f->arg_codes + ins->first_arg, sizeof(int) * (size_t)n);
  RVMVMRegSlot* slots = f->reg_slots + ins->first_reg;
  RVMValue* regs = vm->reg_values + base;
  int* codes = vm->reg_codes + base;
  int boxed = 0;
  for (int k = 0; k < ins->nregs; ++k) {
    int32_t pos = slots[k].pos;
    av[pos] = regs[slots[k].reg];
    ac[pos] = codes[slots[k].reg];
    boxed |= rvm_vm_is_box(av[pos], ac[pos]);
  }
  /* Python values in registers cross to C functions in their packed form, converted for this
   * call. Native builtins see the boxes: they handle them (copy, make_tuple) or defer. */
  if (ins->op == kVMOpCallNative) boxed = 0;
  RVMByteArray* bytes = NULL;
  PyObject** keep = NULL;
  char* converted = NULL;
  int rc = 0;
  if (boxed) {
    bytes = (RVMByteArray*)PyMem_Malloc(sizeof(RVMByteArray) * (size_t)n);
    keep = (PyObject**)PyMem_Calloc((size_t)n, sizeof(PyObject*));
    converted = (char*)PyMem_Calloc((size_t)n, 1);
    if (bytes == NULL || keep == NULL || converted == NULL) {
      PyErr_NoMemory();
      rc = -1;
    }
    ArgSlots tmp = {av, ac, bytes, keep};
    for (int k = 0; rc == 0 && k < ins->nregs; ++k) {
      int32_t pos = slots[k].pos;
      if (!rvm_vm_is_box(av[pos], ac[pos])) continue;
      PyObject* obj = rvm_vm_box_object((RVMObject*)av[pos].v_handle);
      if (rvm_py_to_value(obj, &tmp, pos, NULL, 0) != 0) {
        rc = -1;
        break;
      }
      converted[pos] = 1;
    }
  }
  if (rc == 0) {
    if (ins->op == kVMOpCallNative) {
      rc = c->native(vm, av, ac, n, ret, ret_code);
      if (rc == RVM_VM_DEFER) {
        rc = rvm_vm_call_python(vm, c->py, f, ins, base, ret, ret_code);
      } else if (rc == 0) {
        rc = rvm_vm_own_result(ret, ret_code);
      }
    } else {
      ret->v_int64 = 0;
      *ret_code = kRVMNull;
      int failed;
      if (vm->release_gil) {
        /* C code takes the GIL itself where it needs it (Python callbacks, boxes). */
        PyThreadState* state = PyEval_SaveThread();
        failed = c->cfunc(av, ac, n, ret, ret_code, c->resource);
        PyEval_RestoreThread(state);
      } else {
        failed = c->cfunc(av, ac, n, ret, ret_code, c->resource);
      }
      if (failed != 0) {
        rvm_raise_last_error();
        rc = -1;
      } else {
        rc = rvm_vm_own_result(ret, ret_code);
      }
    }
  }
  if (converted != NULL) {
    for (int k = 0; k < n; ++k) {
      if (!converted[k]) continue;
      RVMValueRelease(av[k], ac[k]);
      Py_XDECREF(keep[k]);
    }
  }
  PyMem_Free(bytes);
  PyMem_Free(keep);
  PyMem_Free(converted);
  if (av != values_stack) {
    PyMem_Free(av);
    PyMem_Free(ac);
  }
  return rc;
}

/* Pushes the frame of a VM-to-VM call; its arguments are copied (retained) into it. */
static int push_frame(RVMVirtualMachine* vm, RVMVMFunc* f, RVMVMInstr* ins, size_t base,
                      size_t frame0) {
  RVMVMFunc* g = &vm->funcs[ins->callee];
  if (ins->nargs != g->num_args) {
    PyErr_Format(PyExc_TypeError, "%s() takes %d argument(s), got %d", g->name, (int)g->num_args,
                 (int)ins->nargs);
    return -1;
  }
  if (vm->frame_top - 1 - frame0 >= RVM_VM_MAX_CALL_DEPTH) { /* frames below the current one */
    PyErr_Format(PyExc_RecursionError, "VM call depth exceeded %d", RVM_VM_MAX_CALL_DEPTH);
    return -1;
  }
  if (rvm_vm_reserve(vm, (size_t)g->num_regs) != 0) return -1;
  size_t nb = vm->reg_top;
  RVMValue* nv = vm->reg_values + nb;
  int* nc = vm->reg_codes + nb;
  memcpy(nv, f->arg_values + ins->first_arg, sizeof(RVMValue) * (size_t)ins->nargs);
  memcpy(nc, f->arg_codes + ins->first_arg, sizeof(int) * (size_t)ins->nargs);
  RVMVMRegSlot* slots = f->reg_slots + ins->first_reg;
  for (int k = 0; k < ins->nregs; ++k) {
    nv[slots[k].pos] = vm->reg_values[base + slots[k].reg];
    nc[slots[k].pos] = vm->reg_codes[base + slots[k].reg];
  }
  for (int k = 0; k < ins->nargs; ++k) {
    if (rvm_is_object_code(nc[k])) RVMObjectRetain((RVMObject*)nv[k].v_handle);
  }
  for (int32_t k = ins->nargs; k < g->num_regs; ++k) {
    nv[k].v_int64 = 0;
    nc[k] = kRVMNull;
  }
  vm->reg_top = nb + (size_t)g->num_regs;
  RVMVMFrame* fr = &vm->frames[vm->frame_top++];
  fr->fidx = ins->callee;
  fr->pc = 0;
  fr->ret_dst = ins->dst;
  fr->base = nb;
  return 0;
}

/* Releases the registers of the top frame and pops it. */
static void pop_frame(RVMVirtualMachine* vm) {
  RVMVMFrame* fr = &vm->frames[vm->frame_top - 1];
  size_t end = vm->reg_top;
  for (size_t i = fr->base; i < end; ++i) {
    RVMValue v = vm->reg_values[i];
    int code = vm->reg_codes[i];
    vm->reg_codes[i] = kRVMNull;
    RVMValueRelease(v, code);
  }
  vm->reg_top = vm->frames[vm->frame_top - 1].base;
  vm->frame_top--;
}

static int branch_taken(RVMVirtualMachine* vm, RVMValue v, int code) {
  if (code == kRVMBool || code == kRVMInt) return v.v_int64 != 0;
  PyObject* obj = rvm_vm_to_py(vm, v, code, 0);
  if (obj == NULL) return -1;
  PyObject* res = PyObject_CallOneArg(vm->truth, obj);
  Py_DECREF(obj);
  if (res == NULL) return -1;
  int truth = PyObject_IsTrue(res);
  Py_DECREF(res);
  return truth;
}

static void add_position_note(RVMVirtualMachine* vm, int32_t fidx, int32_t pc, size_t depth) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  if (tb != NULL && value != NULL) PyException_SetTraceback(value, tb);
  PyObject* note =
      PyObject_CallFunction(vm->describe, "iin", (int)fidx, (int)pc, (Py_ssize_t)depth);
  if (note != NULL && value != NULL) {
    PyObject* res = PyObject_CallMethod(value, "add_note", "O", note);
    Py_XDECREF(res);
  }
  Py_XDECREF(note);
  PyErr_Clear();
  PyErr_Restore(type, value, tb);
}

/* A loop may run forever without calls: signals (Ctrl-C) are checked at every backward
 * jump, and now and then other threads get the GIL, as in the Python interpreter. */
static int backward_jump(RVMVirtualMachine* vm) {
  if (PyErr_CheckSignals() != 0) return -1;
  if (++vm->backward_jumps % 4096 == 0) {
    Py_BEGIN_ALLOW_THREADS
    Py_END_ALLOW_THREADS
  }
  return 0;
}

/* Runs from the frame at index frame0 (already pushed) until it returns. */
static PyObject* run_loop(RVMVirtualMachine* vm, size_t frame0) {
  int32_t fidx = vm->frames[frame0].fidx;
  int32_t pc = 0;
  size_t base = vm->frames[frame0].base;
  RVMVMFunc* f = &vm->funcs[fidx];
  RVMValue ret;
  int ret_code;
  for (;;) {
    RVMVMInstr* ins = &f->code[pc];
    switch (ins->op) {
      case kVMOpCallNative:
      case kVMOpCallC:
        if (call_c(vm, &vm->pool[ins->callee], f, ins, base, &ret, &ret_code) != 0) goto error;
        rvm_vm_set_reg(vm, base, ins->dst, ret, ret_code);
        ++pc;
        break;
      case kVMOpCallPy:
        if (rvm_vm_call_python(vm, vm->pool[ins->callee].py, f, ins, base, &ret, &ret_code) != 0)
          goto error;
        rvm_vm_set_reg(vm, base, ins->dst, ret, ret_code);
        ++pc;
        break;
      case kVMOpCallVM:
        vm->frames[vm->frame_top - 1].pc = pc;
        if (push_frame(vm, f, ins, base, frame0) != 0) goto error;
        fidx = ins->callee;
        f = &vm->funcs[fidx];
        pc = 0;
        base = vm->frames[vm->frame_top - 1].base;
        break;
      case kVMOpRet: {
        size_t r = base + (size_t)ins->callee;
        RVMValue v = vm->reg_values[r];
        int code = vm->reg_codes[r];
        vm->reg_codes[r] = kRVMNull;
        int32_t dst = vm->frames[vm->frame_top - 1].ret_dst;
        pop_frame(vm);
        if (vm->frame_top == frame0) return rvm_vm_to_py(vm, v, code, 1);
        RVMVMFrame* caller = &vm->frames[vm->frame_top - 1];
        fidx = caller->fidx;
        f = &vm->funcs[fidx];
        pc = caller->pc + 1;
        base = caller->base;
        rvm_vm_set_reg(vm, base, dst, v, code);
        break;
      }
      case kVMOpInvoke: {
        vm->frames[vm->frame_top - 1].pc = pc;
        int pushed = rvm_vm_invoke_closure(vm, f, ins, base, frame0);
        if (pushed < 0) goto error;
        if (pushed == 0) {
          ++pc;
          break;
        }
        fidx = vm->frames[vm->frame_top - 1].fidx;
        f = &vm->funcs[fidx];
        pc = 0;
        base = vm->frames[vm->frame_top - 1].base;
        break;
      }
      case kVMOpGoto:
        if (ins->target <= pc && backward_jump(vm) != 0) goto error;
        pc = ins->target;
        break;
      default: { /* kVMOpIf */
        size_t r = base + (size_t)ins->callee;
        int taken = branch_taken(vm, vm->reg_values[r], vm->reg_codes[r]);
        if (taken < 0) goto error;
        if (!taken && ins->target <= pc && backward_jump(vm) != 0) goto error;
        pc = taken ? pc + 1 : ins->target;
        break;
      }
    }
  }
error : {
  size_t depth = vm->frame_top - 1 - frame0;
  while (vm->frame_top > frame0) pop_frame(vm);
  add_position_note(vm, fidx, pc, depth);
  return NULL;
}
}

static PyObject* run(RVMVirtualMachine* vm, int32_t fidx, PyObject* const* args, Py_ssize_t n);

PyObject* rvm_vm_run(RVMVirtualMachine* vm, int32_t fidx, PyObject* const* args, Py_ssize_t n) {
  if (fidx < 0 || fidx >= vm->num_funcs || !vm->funcs[fidx].is_vm) {
    return PyErr_Format(PyExc_ValueError, "native VM: %d is not a VM function", (int)fidx);
  }
  /* The frames of all runs share one stack: runs of another thread would interleave. */
  unsigned long me = PyThread_get_thread_ident();
  if (vm->active_runs > 0 && vm->thread != me) {
    return PyErr_Format(PyExc_RuntimeError,
                        "VirtualMachine: called from two threads at once; a VirtualMachine is "
                        "used by one thread at a time (make one per thread)");
  }
  vm->thread = me;
  vm->active_runs++;
  PyObject* res = run(vm, fidx, args, n);
  vm->active_runs--;
  return res;
}

static PyObject* run(RVMVirtualMachine* vm, int32_t fidx, PyObject* const* args, Py_ssize_t n) {
  RVMVMFunc* f = &vm->funcs[fidx];
  if (n != f->num_args) {
    return PyErr_Format(PyExc_TypeError, "%s() takes %d argument(s), got %zd", f->name,
                        (int)f->num_args, n);
  }
  if (rvm_vm_reserve(vm, (size_t)f->num_regs) != 0) return NULL;
  size_t base = vm->reg_top;
  for (int32_t k = 0; k < f->num_regs; ++k) {
    vm->reg_values[base + k].v_int64 = 0;
    vm->reg_codes[base + k] = kRVMNull;
  }
  /* The frame's registers are taken before converting: conversions may run Python code. */
  vm->reg_top = base + (size_t)f->num_regs;
  for (Py_ssize_t k = 0; k < n; ++k) {
    RVMValue v;
    int code;
    if (rvm_vm_arg_from_py(vm, args[k], &v, &code) != 0) {
      for (Py_ssize_t j = 0; j < k; ++j) {
        RVMValueRelease(vm->reg_values[base + j], vm->reg_codes[base + j]);
        vm->reg_codes[base + j] = kRVMNull;
      }
      vm->reg_top = base;
      return NULL;
    }
    vm->reg_values[base + k] = v;
    vm->reg_codes[base + k] = code;
  }
  if (rvm_vm_reserve(vm, 0) != 0) {
    for (Py_ssize_t j = 0; j < n; ++j) {
      RVMValueRelease(vm->reg_values[base + j], vm->reg_codes[base + j]);
      vm->reg_codes[base + j] = kRVMNull;
    }
    vm->reg_top = base;
    return NULL;
  }
  RVMVMFrame* fr = &vm->frames[vm->frame_top++];
  fr->fidx = fidx;
  fr->pc = 0;
  fr->ret_dst = -1;
  fr->base = base;
  return run_loop(vm, vm->frame_top - 1);
}
