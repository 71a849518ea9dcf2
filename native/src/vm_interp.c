/* The native engine's interpreter loop over the linked form, its frames, and runs
 * entered from Python. rvm.vm.interpreter is the reference it follows. */
#include <stdlib.h>
#include <string.h>

#include "vm_engine.h"

#define RVM_VM_UNLIKELY(x) __builtin_expect(!!(x), 0)

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
    if (values == NULL) return -1;
    vm->reg_values = values;
    int* codes = (int*)realloc(vm->reg_codes, sizeof(int) * cap);
    if (codes == NULL) return -1;
    vm->reg_codes = codes;
    vm->reg_cap = cap;
  }
  if (vm->frame_top + 1 > vm->frame_cap) {
    size_t cap = vm->frame_cap ? vm->frame_cap * 2 : 64;
    RVMVMFrame* frames = (RVMVMFrame*)realloc(vm->frames, sizeof(RVMVMFrame) * cap);
    if (frames == NULL) return -1;
    vm->frames = frames;
    vm->frame_cap = cap;
  }
  return 0;
}

void rvm_vm_push_frame(RVMVirtualMachine* vm, int32_t fidx, int32_t ret_dst, size_t base) {
  RVMVMFrame* fr = &vm->frames[vm->frame_top++];
  fr->fidx = fidx;
  fr->pc = vm->funcs[fidx].start;
  fr->ret_dst = ret_dst;
  fr->base = base;
}

/* One more step of a run (a VM call or a backward jump); -1 with the error past the
 * VM's step_limit, or when the run was cancelled (time_limit, Ctrl-C). */
static inline int count_step(RVMVirtualMachine* vm, int64_t* steps) {
  RVMKernelContext* ctx = &((RVMVMState*)vm->state)->kernels;
  if (RVM_VM_UNLIKELY(__atomic_load_n(&ctx->cancel, __ATOMIC_RELAXED) != 0)) {
    rvm_vm_hold_gil(vm);
    return rvm_kernel_context_raise(ctx);
  }
  if (vm->step_limit == 0 || ++*steps <= vm->step_limit) return 0;
  rvm_vm_hold_gil(vm);
  PyErr_Format(PyExc_RuntimeError, RVM_VM_STEP_LIMIT_MESSAGE, (long long)vm->step_limit);
  return -1;
}

/* A VM-to-VM call: the callee's registers start with the call's arguments (retained). */
static int push_call(RVMVirtualMachine* vm, const RVMVMLinkedInstr* ins, size_t base,
                     size_t frame0) {
  RVMVMFunc* g = &vm->funcs[ins->callee];
  if (vm->frame_top - 1 - frame0 >= RVM_VM_MAX_CALL_DEPTH) {
    rvm_vm_hold_gil(vm);
    PyErr_Format(PyExc_RecursionError, "VM call depth exceeded %d", RVM_VM_MAX_CALL_DEPTH);
    return -1;
  }
  if (rvm_vm_reserve(vm, (size_t)g->num_regs) != 0) {
    rvm_vm_hold_gil(vm);
    PyErr_NoMemory();
    return -1;
  }
  size_t nb = vm->reg_top;
  for (int k = 0; k < ins->nargs; ++k) {
    rvm_vm_arg(vm, ins, base, k, &vm->reg_values[nb + k], &vm->reg_codes[nb + k]);
    if (rvm_is_object_code(vm->reg_codes[nb + k]))
      RVMObjectRetain((RVMObject*)vm->reg_values[nb + k].v_handle);
  }
  for (int32_t k = ins->nargs; k < g->num_regs; ++k) vm->reg_codes[nb + k] = kRVMNull;
  vm->reg_top = nb + (size_t)g->num_regs;
  rvm_vm_push_frame(vm, ins->callee, ins->dst, nb);
  return 0;
}

/* Releases the registers of the top frame and pops it. */
static void pop_frame(RVMVirtualMachine* vm) {
  size_t base = vm->frames[vm->frame_top - 1].base;
  for (size_t i = base; i < vm->reg_top; ++i) {
    int code = vm->reg_codes[i];
    vm->reg_codes[i] = kRVMNull;
    RVMValueRelease(vm->reg_values[i], code);
  }
  vm->reg_top = base;
  vm->frame_top--;
}

/* The truth of an IF condition that is not a bool or an int: the truth hook decides. */
static int branch_taken(RVMVirtualMachine* vm, RVMValue v, int code) {
  rvm_vm_hold_gil(vm);
  PyObject* obj = rvm_value_to_py(v, code, 0);
  PyObject* res = obj != NULL ? PyObject_CallOneArg(vm->truth, obj) : NULL;
  Py_XDECREF(obj);
  int truth = res != NULL ? PyObject_IsTrue(res) : -1;
  Py_XDECREF(res);
  return truth;
}

/* A loop may run forever without calls: each backward jump is a step, signals (Ctrl-C)
 * are checked at every one, and now and then other threads get the GIL, as in the Python
 * interpreter. */
static int backward_jump(RVMVirtualMachine* vm, int64_t* steps) {
  if (count_step(vm, steps) != 0) return -1;
  rvm_vm_hold_gil(vm);
  if (PyErr_CheckSignals() != 0) return -1;
  if (++vm->backward_jumps % 4096 == 0) {
    Py_BEGIN_ALLOW_THREADS
    Py_END_ALLOW_THREADS
  }
  return 0;
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

/* Runs from the frame at index frame0 (already pushed) until it returns. */
static PyObject* run_loop(RVMVirtualMachine* vm, size_t frame0) {
  int32_t fidx = vm->frames[frame0].fidx, pc = vm->frames[frame0].pc;
  size_t base = vm->frames[frame0].base;
  int64_t steps = 0;
  for (;;) {
    const RVMVMLinkedInstr* ins = &vm->code[pc];
    switch (ins->op) {
      case kRVMOpCall: {
        RVMVMFunc* f = &vm->funcs[ins->callee];
        int pushed = 0;
        if (f->kind == kRVMCalleeVm) {
          vm->frames[vm->frame_top - 1].pc = pc; /* where the callee returns to */
          if (count_step(vm, &steps) != 0 || push_call(vm, ins, base, frame0) != 0) goto error;
          pushed = 1;
        } else if (vm->instrument != NULL || vm->profile != NULL) {
          if (rvm_vm_call_observed(vm, pc, base) != 0) goto error;
        } else if (f->kind == kRVMCalleeClosure) {
          vm->frames[vm->frame_top - 1].pc = pc;
          pushed = rvm_vm_invoke_closure(vm, ins, base, frame0);
          if (pushed < 0 || (pushed && count_step(vm, &steps) != 0)) goto error;
        } else if (rvm_vm_call(vm, f, ins, base) != 0) {
          goto error;
        }
        if (pushed) {
          RVMVMFrame* top = &vm->frames[vm->frame_top - 1];
          fidx = top->fidx;
          pc = top->pc;
          base = top->base;
        } else {
          ++pc;
        }
        break;
      }
      case kRVMOpRet: {
        size_t r = base + (size_t)ins->reg;
        RVMValue v = vm->reg_values[r];
        int code = vm->reg_codes[r];
        vm->reg_codes[r] = kRVMNull;
        int32_t dst = vm->frames[vm->frame_top - 1].ret_dst;
        pop_frame(vm);
        if (vm->frame_top == frame0) {
          rvm_vm_hold_gil(vm);
          return rvm_value_to_py(v, code, 1);
        }
        RVMVMFrame* caller = &vm->frames[vm->frame_top - 1];
        fidx = caller->fidx;
        pc = caller->pc + 1;
        base = caller->base;
        rvm_vm_set_reg(vm, base, dst, v, code);
        break;
      }
      case kRVMOpGoto:
        if (ins->target <= pc && backward_jump(vm, &steps) != 0) goto error;
        pc = ins->target;
        break;
      default: { /* kRVMOpIf */
        size_t r = base + (size_t)ins->reg;
        int code = vm->reg_codes[r];
        int taken = code == kRVMBool || code == kRVMInt
                        ? vm->reg_values[r].v_int64 != 0
                        : branch_taken(vm, vm->reg_values[r], code);
        if (taken < 0) goto error;
        if (!taken && ins->target <= pc && backward_jump(vm, &steps) != 0) goto error;
        pc = taken ? pc + 1 : ins->target;
        break;
      }
    }
  }
error : {
  rvm_vm_hold_gil(vm);
  size_t depth = vm->frame_top - 1 - frame0;
  while (vm->frame_top > frame0) pop_frame(vm);
  add_position_note(vm, fidx, pc, depth);
  return NULL;
}
}

/* Whether an argument from Python converts to a register value without Python help. */
static int is_plain(PyObject* obj) {
  PyTypeObject* tp = Py_TYPE(obj);
  return PyObject_TypeCheck(obj, &NDArrayBaseType) || tp == &PyLong_Type ||
         tp == &PyFloat_Type || obj == Py_None || tp == &PyBool_Type || tp == &PackedFuncType ||
         tp == rvm_hooks.shape_tuple_type;
}

/* The frame of a run from Python: its registers start with the (converted) arguments. */
static int enter(RVMVirtualMachine* vm, int32_t fidx, PyObject* const* args, Py_ssize_t n) {
  RVMVMFunc* f = &vm->funcs[fidx];
  PyObject* checked = NULL;
  int plain = n == f->num_args;
  for (Py_ssize_t k = 0; plain && k < n; ++k) plain = is_plain(args[k]);
  if (!plain) { /* the hook converts numpy values and raises the argument-count error */
    PyObject* tup = PyTuple_New(n);
    for (Py_ssize_t k = 0; tup != NULL && k < n; ++k) {
      Py_INCREF(args[k]);
      PyTuple_SET_ITEM(tup, k, args[k]);
    }
    checked = tup != NULL ? PyObject_CallFunction(vm->check_args, "iO", (int)fidx, tup) : NULL;
    Py_XDECREF(tup);
    PyObject* fast = checked != NULL ? PySequence_Fast(checked, "check_args: a sequence") : NULL;
    Py_XDECREF(checked);
    if (fast == NULL) return -1;
    if (PySequence_Fast_GET_SIZE(fast) != f->num_args) {
      Py_DECREF(fast);
      PyErr_Format(PyExc_TypeError, "%s() takes %d argument(s), got %zd", f->name,
                   (int)f->num_args, n);
      return -1;
    }
    checked = fast;
    args = PySequence_Fast_ITEMS(fast);
  }
  int rc = rvm_vm_reserve(vm, (size_t)f->num_regs);
  if (rc != 0) PyErr_NoMemory();
  size_t base = vm->reg_top;
  for (int32_t k = 0; rc == 0 && k < f->num_regs; ++k) vm->reg_codes[base + k] = kRVMNull;
  if (rc == 0) vm->reg_top = base + (size_t)f->num_regs; /* conversions may run Python code */
  for (int32_t k = 0; rc == 0 && k < f->num_args; ++k)
    rc = rvm_vm_from_py(args[k], &vm->reg_values[base + k], &vm->reg_codes[base + k]);
  Py_XDECREF(checked);
  if (rc != 0 && vm->reg_top > base) {
    for (size_t i = base; i < vm->reg_top; ++i) RVMValueRelease(vm->reg_values[i], vm->reg_codes[i]);
    vm->reg_top = base;
    return -1;
  }
  if (rc == 0) rvm_vm_push_frame(vm, fidx, RVM_VM_VOID_REG, base);
  return rc;
}

PyObject* rvm_vm_run(RVMVirtualMachine* vm, int32_t fidx, PyObject* const* args, Py_ssize_t n) {
  if (fidx < 0 || fidx >= vm->num_funcs || vm->funcs[fidx].kind != kRVMCalleeVm) {
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
  PyObject* res = NULL;
  RVMVMState* state = (RVMVMState*)vm->state;
  RVMKernelContext* previous = rvm_kernel_context_enter(state);
  if (enter(vm, fidx, args, n) == 0) res = run_loop(vm, vm->frame_top - 1);
  rvm_kernel_context_exit(state, previous);
  vm->active_runs--;
  return res;
}
