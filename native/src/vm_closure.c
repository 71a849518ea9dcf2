/* vm.builtin.invoke_closure in the native engine: a closure of the running VM
 * gets a frame like a direct call; any other callable goes to the Python builtin. */
#include "vm_engine.h"

/* The value of argument pos of a call (borrowed). */
static void arg_at(RVMVirtualMachine* vm, RVMVMFunc* f, RVMVMInstr* ins, size_t base, int pos,
                   RVMValue* v, int* code) {
  *v = f->arg_values[ins->first_arg + pos];
  *code = f->arg_codes[ins->first_arg + pos];
  RVMVMRegSlot* slots = f->reg_slots + ins->first_reg;
  for (int k = 0; k < ins->nregs; ++k) {
    if (slots[k].pos == pos) {
      *v = vm->reg_values[base + slots[k].reg];
      *code = vm->reg_codes[base + slots[k].reg];
    }
  }
}

/* Raises the Python engine's error for a closure called with the wrong argument count. */
static void closure_arity_error(RVMVirtualMachine* vm, int32_t callee, PyObject* saved,
                                RVMVMFunc* f, RVMVMInstr* ins, size_t base) {
  Py_ssize_t nsaved = PyTuple_GET_SIZE(saved);
  PyObject* all = PyList_New(nsaved);
  for (Py_ssize_t k = 0; all != NULL && k < nsaved; ++k) {
    Py_INCREF(PyTuple_GET_ITEM(saved, k));
    PyList_SET_ITEM(all, k, PyTuple_GET_ITEM(saved, k));
  }
  for (int pos = 2; all != NULL && pos < ins->nargs; ++pos) {
    RVMValue v;
    int code;
    arg_at(vm, f, ins, base, pos, &v, &code);
    PyObject* obj = rvm_vm_to_py(vm, v, code, 0);
    if (obj == NULL || PyList_Append(all, obj) != 0) Py_CLEAR(all);
    Py_XDECREF(obj);
  }
  if (all == NULL) return;
  PyObject* res = PyObject_CallFunction(vm->check_args, "iO", (int)callee, all);
  Py_DECREF(all);
  if (res != NULL) {
    Py_DECREF(res);
    PyErr_Format(PyExc_TypeError, "%s() takes %d argument(s), got %zd", vm->funcs[callee].name,
                 (int)vm->funcs[callee].num_args, nsaved + ins->nargs - 2);
  }
}

/* invoke_closure(vm, closure, args...) on a closure of this VM: pushes its frame, with the
 * saved arguments first (returns 1). Other callables go to the Python builtin (returns 0,
 * the result stored). -1: an error. */
int rvm_vm_invoke_closure(RVMVirtualMachine* vm, RVMVMFunc* f, RVMVMInstr* ins, size_t base,
                          size_t frame0) {
  RVMValue v;
  int code;
  PyObject* closure = NULL;
  if (ins->nargs >= 2) {
    arg_at(vm, f, ins, base, 1, &v, &code);
    if (rvm_vm_is_box(v, code)) closure = rvm_vm_box_object((RVMObject*)v.v_handle);
  }
  PyObject *owner = NULL, *index = NULL, *saved = NULL;
  long callee = -1;
  if (closure != NULL && Py_TYPE(closure) == (PyTypeObject*)vm->closure_type) {
    owner = PyObject_GetAttrString(closure, "vm");
    index = PyObject_GetAttrString(closure, "func_index");
    saved = PyObject_GetAttrString(closure, "saved_args");
    if (owner == NULL || index == NULL || saved == NULL) goto fail;
    callee = PyLong_AsLong(index);
    if (callee == -1 && PyErr_Occurred()) goto fail;
  }
  if (owner != vm->vm || callee < 0 || callee >= vm->num_funcs || !vm->funcs[callee].is_vm ||
      !PyTuple_Check(saved)) {
    Py_XDECREF(owner);
    Py_XDECREF(index);
    Py_XDECREF(saved);
    RVMValue ret;
    int ret_code;
    PyObject* fn = vm->pool[ins->callee].py;
    if (rvm_vm_call_python(vm, fn, f, ins, base, &ret, &ret_code) != 0) return -1;
    rvm_vm_set_reg(vm, base, ins->dst, ret, ret_code);
    return 0;
  }
  RVMVMFunc* g = &vm->funcs[callee];
  Py_ssize_t nsaved = PyTuple_GET_SIZE(saved);
  if (nsaved + ins->nargs - 2 != g->num_args) {
    closure_arity_error(vm, (int32_t)callee, saved, f, ins, base);
    goto fail;
  }
  if (vm->frame_top - 1 - frame0 >= RVM_VM_MAX_CALL_DEPTH) {
    PyErr_Format(PyExc_RecursionError, "VM call depth exceeded %d", RVM_VM_MAX_CALL_DEPTH);
    goto fail;
  }
  if (rvm_vm_reserve(vm, (size_t)g->num_regs) != 0) goto fail;
  size_t nb = vm->reg_top;
  for (int32_t k = 0; k < g->num_regs; ++k) vm->reg_codes[nb + k] = kRVMNull;
  vm->reg_top = nb + (size_t)g->num_regs; /* claimed before conversions run Python code */
  for (Py_ssize_t k = 0; k < nsaved; ++k) {
    if (rvm_vm_arg_from_py(vm, PyTuple_GET_ITEM(saved, k), &v, &code) != 0) {
      for (size_t i = nb; i < nb + (size_t)k; ++i) {
        RVMValueRelease(vm->reg_values[i], vm->reg_codes[i]);
        vm->reg_codes[i] = kRVMNull;
      }
      vm->reg_top = nb;
      goto fail;
    }
    vm->reg_values[nb + k] = v;
    vm->reg_codes[nb + k] = code;
  }
  for (int pos = 2; pos < ins->nargs; ++pos) {
    arg_at(vm, f, ins, base, pos, &v, &code);
    if (rvm_is_object_code(code)) RVMObjectRetain((RVMObject*)v.v_handle);
    vm->reg_values[nb + nsaved + pos - 2] = v;
    vm->reg_codes[nb + nsaved + pos - 2] = code;
  }
  Py_DECREF(owner);
  Py_DECREF(index);
  Py_DECREF(saved);
  if (rvm_vm_reserve(vm, 0) != 0) {
    for (size_t i = nb; i < vm->reg_top; ++i) {
      RVMValueRelease(vm->reg_values[i], vm->reg_codes[i]);
      vm->reg_codes[i] = kRVMNull;
    }
    vm->reg_top = nb;
    return -1;
  }
  RVMVMFrame* fr = &vm->frames[vm->frame_top++];
  fr->fidx = (int32_t)callee;
  fr->pc = 0;
  fr->ret_dst = ins->dst;
  fr->base = nb;
  return 1;
fail:
  Py_XDECREF(owner);
  Py_XDECREF(index);
  Py_XDECREF(saved);
  return -1;
}

