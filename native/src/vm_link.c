/* The native engine's tables, from the linked form rvm.vm.link produces: function
 * entries, instruction rows, argument pairs, values, hooks. Every index is checked
 * here, once, so the loop never reads outside its tables; a linked form that fails
 * a check is refused with the function and instruction it concerns. */
#include <stdlib.h>
#include <string.h>

#include "vm_engine.h"

#define MAX_REGS (1 << 20)

static int bad_function(RVMVMFunc* f, int32_t index, const char* problem) {
  PyErr_Format(PyExc_ValueError, "native VM: function %d ('%s'): %s", (int)index,
               f->name != NULL ? f->name : "?", problem);
  return -1;
}

static int bad_instr(RVMVMFunc* f, int32_t pc, const char* problem) {
  PyErr_Format(PyExc_ValueError, "native VM: function '%s', instruction %d: %s", f->name,
               (int)(pc - f->start), problem);
  return -1;
}

/* A copy of a bytes object holding count structs of size each. */
static void* read_rows(PyObject* obj, size_t each, int64_t* count, const char* what) {
  if (!PyBytes_Check(obj) || PyBytes_GET_SIZE(obj) % (Py_ssize_t)each != 0) {
    PyErr_Format(PyExc_TypeError, "native VM: %s must be bytes of %zu-byte rows", what, each);
    return NULL;
  }
  *count = PyBytes_GET_SIZE(obj) / (Py_ssize_t)each;
  void* rows = malloc((size_t)PyBytes_GET_SIZE(obj) + each);
  if (rows == NULL) {
    PyErr_NoMemory();
    return NULL;
  }
  memcpy(rows, PyBytes_AS_STRING(obj), (size_t)PyBytes_GET_SIZE(obj));
  return rows;
}

static int link_hooks(RVMVirtualMachine* vm, PyObject* hooks) {
  static const char* names[] = {"vm", "describe", "truth", "check_args", "closure_type"};
  PyObject** slots[] = {&vm->pyvm, &vm->describe, &vm->truth, &vm->check_args,
                        &vm->closure_type};
  for (int k = 0; k < 5; ++k) {
    *slots[k] = PyObject_GetAttrString(hooks, names[k]);
    if (*slots[k] == NULL) return -1;
  }
  return 0;
}

static int link_function(RVMVirtualMachine* vm, int32_t i, PyObject* entry) {
  RVMVMFunc* f = &vm->funcs[i];
  const char* name;
  PyObject* callee;
  if (!PyTuple_Check(entry) ||
      !PyArg_ParseTuple(entry, "siiiiiO", &name, &f->kind, &f->start, &f->end, &f->num_args,
                        &f->num_regs, &callee)) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "native VM: bad function entry");
    return -1;
  }
  f->name = strdup(name);
  if (f->name == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  Py_INCREF(callee);
  f->py = callee;
  if (f->kind == kRVMCalleeVm) {
    if (!(0 <= f->start && f->start < f->end && f->end <= vm->num_code))
      return bad_function(f, i, "instruction range outside the code");
    if (!(0 <= f->num_args && f->num_args <= f->num_regs && f->num_regs <= MAX_REGS))
      return bad_function(f, i, "bad argument or register count");
  } else if (f->kind == kRVMCalleeC) {
    if (Py_TYPE(callee) != &PackedFuncType || ((PackedFuncObject*)callee)->pyfunc != NULL)
      return bad_function(f, i, "a C callee must be a C PackedFunc");
    f->handle = rvm_packed_func_handle((PackedFuncObject*)callee);
    if (f->handle == NULL) return -1;
    RVMObjectRetain(f->handle);
    f->cfunc = ((RVMFunctionObj*)f->handle)->func;
    f->resource = ((RVMFunctionObj*)f->handle)->resource;
  } else if (f->kind != kRVMCalleePython && f->kind != kRVMCalleeClosure) {
    return bad_function(f, i, "unknown callee kind");
  } else if (!PyCallable_Check(callee)) {
    return bad_function(f, i, "a Python callee must be callable");
  }
  return 0;
}

static int check_reg(RVMVMFunc* f, int32_t pc, int32_t reg, int allow_void) {
  if ((allow_void && reg == RVM_VM_VOID_REG) || (reg >= 0 && reg < f->num_regs)) return 0;
  return bad_instr(f, pc, "register out of range");
}

static int check_call(RVMVirtualMachine* vm, RVMVMFunc* f, int32_t pc, RVMVMLinkedInstr* ins) {
  if (check_reg(f, pc, ins->dst, 1) != 0) return -1;
  if (ins->callee < 0 || ins->callee >= vm->num_funcs)
    return bad_instr(f, pc, "function index out of range");
  if (ins->nargs < 0 || ins->first_arg < 0 || ins->first_arg > vm->num_args - ins->nargs)
    return bad_instr(f, pc, "argument range outside the argument table");
  for (int32_t k = 0; k < ins->nargs; ++k) {
    RVMVMLinkedArg* a = &vm->args[ins->first_arg + k];
    if (a->kind == kRVMLinkedReg) {
      if (check_reg(f, pc, a->index, 0) != 0) return -1;
    } else if (a->kind != kRVMLinkedValue || a->index < 0 || a->index >= vm->num_values) {
      return bad_instr(f, pc, "bad argument");
    }
  }
  RVMVMFunc* g = &vm->funcs[ins->callee];
  if (g->kind == kRVMCalleeVm && ins->nargs != g->num_args)
    return bad_instr(f, pc, "argument count differs from the VM callee's");
  if (g->kind == kRVMCalleeClosure && ins->nargs < 2)
    return bad_instr(f, pc, "invoke_closure needs the VM and a closure");
  return 0;
}

static int check_function(RVMVirtualMachine* vm, RVMVMFunc* f) {
  for (int32_t pc = f->start; pc < f->end; ++pc) {
    RVMVMLinkedInstr* ins = &vm->code[pc];
    int jumps = ins->op == kRVMOpGoto || ins->op == kRVMOpIf;
    if (ins->op == kRVMOpCall) {
      if (check_call(vm, f, pc, ins) != 0) return -1;
    } else if (ins->op != kRVMOpRet && !jumps) {
      return bad_instr(f, pc, "unknown opcode");
    }
    if ((ins->op == kRVMOpRet || ins->op == kRVMOpIf) && check_reg(f, pc, ins->reg, 0) != 0)
      return -1;
    if (jumps && (ins->target < f->start || ins->target >= f->end))
      return bad_instr(f, pc, "jump target outside the function");
  }
  int last = vm->code[f->end - 1].op;
  if (last != kRVMOpRet && last != kRVMOpGoto)
    return bad_instr(f, f->end - 1, "the function does not end in RET or GOTO");
  return 0;
}

static int link_values(RVMVirtualMachine* vm, PyObject* values) {
  Py_ssize_t n = PyList_GET_SIZE(values);
  Py_INCREF(values);
  vm->value_list = values;
  vm->values = (RVMValue*)calloc((size_t)n + 1, sizeof(RVMValue));
  vm->value_codes = (int*)calloc((size_t)n + 1, sizeof(int));
  vm->value_bytes = (RVMByteArray*)calloc((size_t)n + 1, sizeof(RVMByteArray));
  if (vm->values == NULL || vm->value_codes == NULL || vm->value_bytes == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* obj = PyList_GET_ITEM(values, i);
    RVMValue* v = &vm->values[i];
    int* code = &vm->value_codes[i];
    /* Strings and bytes point into the value list, which the engine keeps. */
    if (PyUnicode_CheckExact(obj)) {
      v->v_str = PyUnicode_AsUTF8(obj);
      if (v->v_str == NULL) return -1;
      *code = kRVMStr;
    } else if (PyBytes_CheckExact(obj)) {
      vm->value_bytes[i].data = PyBytes_AS_STRING(obj);
      vm->value_bytes[i].size = (size_t)PyBytes_GET_SIZE(obj);
      v->v_handle = &vm->value_bytes[i];
      *code = kRVMBytes;
    } else if (rvm_vm_from_py(obj, v, code) != 0) {
      return -1;
    }
    vm->num_values = (int32_t)(i + 1);
  }
  return 0;
}

int rvm_vm_link(RVMVirtualMachine* vm, PyObject* hooks, PyObject* functions, PyObject* code,
                PyObject* args, PyObject* values, PyObject* state) {
  int64_t num_code, num_args;
  if (!PyList_Check(functions) || !PyList_Check(values) ||
      !PyObject_TypeCheck(state, &ObjectBaseType) ||
      rvm_vm_state_of((RVMValue){.v_handle = ((ObjectObject*)state)->obj}, kRVMObjectHandle) ==
          NULL) {
    PyErr_SetString(PyExc_TypeError, "NativeVM(hooks, functions: list, code: bytes, "
                                     "args: bytes, values: list, state: VM state, release_gil)");
    return -1;
  }
  vm->state = ((ObjectObject*)state)->obj;
  RVMObjectRetain(vm->state);
  if (link_hooks(vm, hooks) != 0) return -1;
  vm->code = (RVMVMLinkedInstr*)read_rows(code, sizeof(RVMVMLinkedInstr), &num_code, "code");
  vm->args = (RVMVMLinkedArg*)read_rows(args, sizeof(RVMVMLinkedArg), &num_args, "args");
  if (vm->code == NULL || vm->args == NULL) return -1;
  if (num_code > INT32_MAX) {
    PyErr_SetString(PyExc_ValueError, "native VM: too many instructions");
    return -1;
  }
  vm->num_code = (int32_t)num_code;
  vm->num_args = num_args;
  if (link_values(vm, values) != 0) return -1;
  Py_ssize_t nfuncs = PyList_GET_SIZE(functions);
  vm->funcs = (RVMVMFunc*)calloc((size_t)nfuncs + 1, sizeof(RVMVMFunc));
  if (vm->funcs == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < nfuncs; ++i) {
    vm->num_funcs = (int32_t)(i + 1);
    if (link_function(vm, (int32_t)i, PyList_GET_ITEM(functions, i)) != 0) return -1;
  }
  for (int32_t i = 0; i < vm->num_funcs; ++i) {
    if (vm->funcs[i].kind == kRVMCalleeVm && check_function(vm, &vm->funcs[i]) != 0) return -1;
  }
  return 0;
}

void rvm_vm_free(RVMVirtualMachine* vm) {
  for (size_t i = 0; i < vm->reg_top; ++i) RVMValueRelease(vm->reg_values[i], vm->reg_codes[i]);
  free(vm->reg_values);
  free(vm->reg_codes);
  free(vm->frames);
  vm->reg_values = NULL;
  vm->reg_codes = NULL;
  vm->frames = NULL;
  vm->reg_top = vm->reg_cap = vm->frame_top = vm->frame_cap = 0;
  for (int32_t i = 0; vm->funcs != NULL && i < vm->num_funcs; ++i) {
    free(vm->funcs[i].name);
    Py_XDECREF(vm->funcs[i].py);
    if (vm->funcs[i].handle != NULL) RVMObjectFree(vm->funcs[i].handle);
  }
  for (int32_t i = 0; vm->values != NULL && i < vm->num_values; ++i)
    RVMValueRelease(vm->values[i], vm->value_codes[i]);
  free(vm->funcs);
  free(vm->code);
  free(vm->args);
  free(vm->values);
  free(vm->value_codes);
  free(vm->value_bytes);
  free(vm->profile);
  vm->funcs = NULL;
  vm->code = NULL;
  vm->args = NULL;
  vm->values = NULL;
  vm->value_codes = NULL;
  vm->value_bytes = NULL;
  vm->profile = NULL;
  vm->num_funcs = vm->num_values = 0;
  if (vm->state != NULL) RVMObjectFree(vm->state);
  vm->state = NULL;
  Py_CLEAR(vm->value_list);
  Py_CLEAR(vm->pyvm);
  Py_CLEAR(vm->describe);
  Py_CLEAR(vm->truth);
  Py_CLEAR(vm->check_args);
  Py_CLEAR(vm->closure_type);
  Py_CLEAR(vm->instrument);
}
