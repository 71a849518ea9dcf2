/* vm.builtin.invoke_closure(vm, closure, args...) in the native engine: a closure of the
 * running VM gets a frame like a direct call, with its saved arguments first; any other
 * callee goes to the Python builtin. */
#include "vm_engine.h"

/* The VM function index of a VMClosure of this VM (its saved arguments in *saved, a new
 * reference), -1 for any other value; -2 on error. */
static long own_closure(RVMVirtualMachine* vm, RVMValue v, int code, PyObject** saved) {
  PyObject* closure = rvm_is_py_box(v, code) ? rvm_py_box_object((RVMObject*)v.v_handle) : NULL;
  if (closure == NULL || Py_TYPE(closure) != (PyTypeObject*)vm->closure_type) return -1;
  PyObject* owner = PyObject_GetAttrString(closure, "vm");
  PyObject* index = owner != NULL ? PyObject_GetAttrString(closure, "func_index") : NULL;
  *saved = index != NULL ? PyObject_GetAttrString(closure, "saved_args") : NULL;
  long callee = *saved == NULL ? -2 : PyLong_AsLong(index);
  if (callee == -1 && PyErr_Occurred()) callee = -2;
  if (callee >= 0 && (owner != vm->pyvm || callee >= vm->num_funcs ||
                      vm->funcs[callee].kind != kRVMCalleeVm || !PyTuple_Check(*saved)))
    callee = -1;
  Py_XDECREF(owner);
  Py_XDECREF(index);
  if (callee < 0) Py_CLEAR(*saved);
  return callee;
}

/* The closure's arguments (saved ones, then those of the call) as Python objects, checked
 * by the check_args hook like any call from Python: the count error names the parameters. */
static PyObject* closure_args(RVMVirtualMachine* vm, long callee, PyObject* saved,
                              const RVMVMLinkedInstr* ins, size_t base) {
  Py_ssize_t nsaved = PyTuple_GET_SIZE(saved);
  PyObject* all = PyTuple_New(nsaved + ins->nargs - 2);
  for (Py_ssize_t k = 0; all != NULL && k < nsaved; ++k) {
    Py_INCREF(PyTuple_GET_ITEM(saved, k));
    PyTuple_SET_ITEM(all, k, PyTuple_GET_ITEM(saved, k));
  }
  for (int k = 2; all != NULL && k < ins->nargs; ++k) {
    RVMValue v;
    int code;
    rvm_vm_arg(vm, ins, base, k, &v, &code);
    PyObject* obj = rvm_value_to_py(v, code, 0);
    if (obj == NULL) Py_CLEAR(all);
    else PyTuple_SET_ITEM(all, nsaved + k - 2, obj);
  }
  if (all == NULL) return NULL;
  PyObject* checked = PyObject_CallFunction(vm->check_args, "lO", callee, all);
  Py_DECREF(all);
  return checked;
}

int rvm_vm_invoke_closure(RVMVirtualMachine* vm, const RVMVMLinkedInstr* ins, size_t base,
                          size_t frame0) {
  RVMValue v;
  int code;
  PyObject* saved = NULL;
  rvm_vm_hold_gil(vm);
  rvm_vm_arg(vm, ins, base, 1, &v, &code);
  long callee = own_closure(vm, v, code, &saved);
  if (callee == -2) return -1;
  if (callee == -1) return rvm_vm_call(vm, &vm->funcs[ins->callee], ins, base);
  PyObject* args = closure_args(vm, callee, saved, ins, base);
  Py_DECREF(saved);
  if (args == NULL) return -1;
  PyObject* fast = PySequence_Fast(args, "check_args must return a sequence");
  Py_DECREF(args);
  if (fast == NULL) return -1;
  RVMVMFunc* g = &vm->funcs[callee];
  int rc = -1;
  if (vm->frame_top - 1 - frame0 >= RVM_VM_MAX_CALL_DEPTH) {
    PyErr_Format(PyExc_RecursionError, "VM call depth exceeded %d", RVM_VM_MAX_CALL_DEPTH);
  } else if (PySequence_Fast_GET_SIZE(fast) != g->num_args) {
    PyErr_SetString(PyExc_TypeError, "check_args returned a wrong number of arguments");
  } else if (rvm_vm_reserve(vm, (size_t)g->num_regs) != 0) {
    PyErr_NoMemory();
  } else {
    size_t nb = vm->reg_top;
    for (int32_t k = 0; k < g->num_regs; ++k) vm->reg_codes[nb + k] = kRVMNull;
    vm->reg_top = nb + (size_t)g->num_regs; /* claimed before conversions run Python code */
    rc = 1;
    for (int32_t k = 0; rc == 1 && k < g->num_args; ++k) {
      PyObject* item = PySequence_Fast_GET_ITEM(fast, k);
      if (rvm_vm_from_py(item, &vm->reg_values[nb + k], &vm->reg_codes[nb + k]) != 0) rc = -1;
    }
    if (rc == 1) {
      rvm_vm_push_frame(vm, (int32_t)callee, ins->dst, nb);
    } else {
      for (size_t i = nb; i < vm->reg_top; ++i) {
        RVMValueRelease(vm->reg_values[i], vm->reg_codes[i]);
        vm->reg_codes[i] = kRVMNull;
      }
      vm->reg_top = nb;
    }
  }
  Py_DECREF(fast);
  return rc;
}
