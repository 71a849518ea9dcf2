/* The Python face of the native engine: rvm.runtime._bridge.NativeVM (built by
 * rvm.vm.native from the linked form), the callables of its functions
 * (NativeEntry), and the VM state object both engines allocate from. */
#include <stdlib.h>
#include <string.h>

#include "vm_engine.h"

typedef struct {
  PyObject_HEAD
  RVMVirtualMachine vm;
} NativeVMObject;

typedef struct {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  NativeVMObject* engine;
  int32_t index;
} NativeEntryObject;

static PyTypeObject RVMNativeEntryType;

static PyObject* native_vm_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject *hooks, *functions, *code, *linked_args, *values, *state;
  int release_gil;
  long long step_limit = 0;
  if (!PyArg_ParseTuple(args, "OOOOOOp|L:NativeVM", &hooks, &functions, &code, &linked_args,
                        &values, &state, &release_gil, &step_limit))
    return NULL;
  if (step_limit < 0) {
    return PyErr_Format(PyExc_ValueError, "step_limit must be a positive number, got %lld",
                        step_limit);
  }
  NativeVMObject* self = (NativeVMObject*)type->tp_alloc(type, 0);
  if (self == NULL) return NULL;
  memset(&self->vm, 0, sizeof(self->vm));
  self->vm.release_gil = release_gil;
  self->vm.step_limit = (int64_t)step_limit;
  if (rvm_vm_link(&self->vm, hooks, functions, code, linked_args, values, state) != 0) {
    Py_DECREF(self);
    return NULL;
  }
  return (PyObject*)self;
}

static int native_vm_traverse(NativeVMObject* self, visitproc visit, void* arg) {
  RVMVirtualMachine* vm = &self->vm;
  Py_VISIT(vm->value_list);
  Py_VISIT(vm->pyvm);
  Py_VISIT(vm->describe);
  Py_VISIT(vm->truth);
  Py_VISIT(vm->check_args);
  Py_VISIT(vm->closure_type);
  Py_VISIT(vm->instrument);
  for (int32_t i = 0; vm->funcs != NULL && i < vm->num_funcs; ++i) Py_VISIT(vm->funcs[i].py);
  for (int32_t i = 0; vm->values != NULL && i < vm->num_values; ++i) {
    if (rvm_is_py_box(vm->values[i], vm->value_codes[i]))
      Py_VISIT(rvm_py_box_object((RVMObject*)vm->values[i].v_handle));
  }
  return 0;
}

static int native_vm_clear(NativeVMObject* self) {
  if (self->vm.active_runs == 0) rvm_vm_free(&self->vm);
  return 0;
}

static void native_vm_dealloc(NativeVMObject* self) {
  PyObject_GC_UnTrack(self);
  rvm_vm_free(&self->vm);
  Py_TYPE(self)->tp_free((PyObject*)self);
}

static RVMVirtualMachine* usable(NativeVMObject* self) {
  if (self->vm.funcs == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "NativeVM: the engine has been released");
    return NULL;
  }
  return &self->vm;
}

static PyObject* native_vm_run(NativeVMObject* self, PyObject* const* args, Py_ssize_t n) {
  if (n < 1) return PyErr_Format(PyExc_TypeError, "run(index, *args) needs an index");
  long index = PyLong_AsLong(args[0]);
  if (index == -1 && PyErr_Occurred()) return NULL;
  RVMVirtualMachine* vm = usable(self);
  return vm == NULL ? NULL : rvm_vm_run(vm, (int32_t)index, args + 1, n - 1);
}

static PyObject* entry_vectorcall(PyObject* callable, PyObject* const* args, size_t nargsf,
                                  PyObject* kwnames) {
  NativeEntryObject* e = (NativeEntryObject*)callable;
  if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
    return PyErr_Format(PyExc_TypeError, "VM functions take positional arguments only");
  }
  RVMVirtualMachine* vm = usable(e->engine);
  return vm == NULL ? NULL : rvm_vm_run(vm, e->index, args, PyVectorcall_NARGS(nargsf));
}

static PyObject* native_vm_entry(NativeVMObject* self, PyObject* arg) {
  long index = PyLong_AsLong(arg);
  if (index == -1 && PyErr_Occurred()) return NULL;
  RVMVirtualMachine* vm = usable(self);
  if (vm == NULL) return NULL;
  if (index < 0 || index >= vm->num_funcs || vm->funcs[index].kind != kRVMCalleeVm) {
    return PyErr_Format(PyExc_ValueError, "NativeVM.entry: %ld is not a VM function", index);
  }
  NativeEntryObject* e = PyObject_GC_New(NativeEntryObject, &RVMNativeEntryType);
  if (e == NULL) return NULL;
  e->vectorcall = entry_vectorcall;
  Py_INCREF(self);
  e->engine = self;
  e->index = (int32_t)index;
  PyObject_GC_Track((PyObject*)e);
  return (PyObject*)e;
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static PyObject* native_vm_start_profile(NativeVMObject* self, PyObject* unused) {
  RVMVirtualMachine* vm = usable(self);
  if (vm == NULL) return NULL;
  free(vm->profile);
  vm->profile = (int64_t*)calloc((size_t)vm->num_code * 2 + 2, sizeof(int64_t));
  if (vm->profile == NULL) return PyErr_NoMemory();
  vm->profile_ns = now_ns();
  vm->profile_ticks = rvm_vm_ticks();
  Py_RETURN_NONE;
}

/* {pc: [calls, seconds]} of the call sites observed since start_profile, which it ends. */
static PyObject* native_vm_stop_profile(NativeVMObject* self, PyObject* unused) {
  RVMVirtualMachine* vm = &self->vm;
  int64_t* counts = vm->profile;
  vm->profile = NULL;
  int64_t ticks = rvm_vm_ticks() - vm->profile_ticks, ns = now_ns() - vm->profile_ns;
  double seconds_per_tick = ticks > 0 ? ns * 1e-9 / (double)ticks : 1e-9;
  PyObject* out = PyDict_New();
  for (int32_t pc = 0; counts != NULL && out != NULL && pc < vm->num_code; ++pc) {
    if (counts[2 * pc] == 0) continue;
    PyObject* key = PyLong_FromLong(pc);
    PyObject* site = Py_BuildValue("[Ld]", (long long)counts[2 * pc],
                                   (double)counts[2 * pc + 1] * seconds_per_tick);
    if (key == NULL || site == NULL || PyDict_SetItem(out, key, site) != 0) Py_CLEAR(out);
    Py_XDECREF(key);
    Py_XDECREF(site);
  }
  free(counts);
  return out;
}

static PyMethodDef native_vm_methods[] = {
    {"run", (PyCFunction)(void (*)(void))native_vm_run, METH_FASTCALL,
     "run(index, *args): runs VM function index."},
    {"entry", (PyCFunction)native_vm_entry, METH_O, "A callable running VM function index."},
    {"start_profile", (PyCFunction)native_vm_start_profile, METH_NOARGS,
     "Times every observed call site from now on."},
    {"stop_profile", (PyCFunction)native_vm_stop_profile, METH_NOARGS,
     "Ends the profile: {pc: [calls, seconds]}."},
    {NULL},
};

static PyObject* get_instrument(NativeVMObject* self, void* closure) {
  PyObject* instrument = self->vm.instrument != NULL ? self->vm.instrument : Py_None;
  Py_INCREF(instrument);
  return instrument;
}

static int set_instrument(NativeVMObject* self, PyObject* value, void* closure) {
  PyObject* old = self->vm.instrument;
  self->vm.instrument = value != NULL && value != Py_None ? value : NULL;
  Py_XINCREF(self->vm.instrument);
  Py_XDECREF(old);
  return 0;
}

static PyObject* get_release_gil(NativeVMObject* self, void* closure) {
  return PyBool_FromLong(self->vm.release_gil);
}

static PyGetSetDef native_vm_getset[] = {
    {"instrument", (getter)get_instrument, (setter)set_instrument,
     "Called around every observed call site, or None.", NULL},
    {"release_gil", (getter)get_release_gil, NULL, "Whether C callees run without the GIL.",
     NULL},
    {NULL},
};

static PyTypeObject RVMNativeVMType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "rvm.runtime.NativeVM",
    .tp_doc = "The native VM engine over one linked executable (see rvm.vm.native).",
    .tp_basicsize = sizeof(NativeVMObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = native_vm_new,
    .tp_dealloc = (destructor)native_vm_dealloc,
    .tp_traverse = (traverseproc)native_vm_traverse,
    .tp_clear = (inquiry)native_vm_clear,
    .tp_methods = native_vm_methods,
    .tp_getset = native_vm_getset,
};

static int entry_traverse(NativeEntryObject* e, visitproc visit, void* arg) {
  Py_VISIT(e->engine);
  return 0;
}

static int entry_clear(NativeEntryObject* e) {
  Py_CLEAR(e->engine);
  return 0;
}

static void entry_dealloc(NativeEntryObject* e) {
  PyObject_GC_UnTrack(e);
  Py_CLEAR(e->engine);
  PyObject_GC_Del(e);
}

static PyObject* entry_repr(NativeEntryObject* e) {
  if (e->engine == NULL || e->engine->vm.funcs == NULL)
    return PyUnicode_FromString("<NativeEntry>");
  return PyUnicode_FromFormat("<VirtualMachine function '%s' (native)>",
                              e->engine->vm.funcs[e->index].name);
}

static PyTypeObject RVMNativeEntryType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "rvm.runtime.NativeEntry",
    .tp_doc = "A VM function of a NativeVM, callable from Python.",
    .tp_basicsize = sizeof(NativeEntryObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_dealloc = (destructor)entry_dealloc,
    .tp_traverse = (traverseproc)entry_traverse,
    .tp_clear = (inquiry)entry_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(NativeEntryObject, vectorcall),
    .tp_repr = (reprfunc)entry_repr,
};

/* ---- the VM state object ---- */

static PyObject* vm_state(PyObject* module, PyObject* args) {
  int num_devices, naive;
  long long memory_limit = 0, step_limit = 0;
  double time_limit = 0;
  if (!PyArg_ParseTuple(args, "ip|LLd:vm_state", &num_devices, &naive, &memory_limit,
                        &step_limit, &time_limit))
    return NULL;
  if (step_limit < 0 || !(time_limit >= 0))
    return PyErr_Format(PyExc_ValueError, "vm_state: step_limit and time_limit must not be "
                        "negative, got %lld and %g", step_limit, time_limit);
  RVMVMState* state = rvm_vm_state_new(num_devices, naive, (int64_t)memory_limit);
  if (state == NULL) return rvm_raise_last_error();
  state->kernels.step_limit = (int64_t)step_limit;
  state->kernels.time_limit = time_limit;
  RVMValue v = {.v_handle = state};
  return rvm_value_to_py(v, kRVMObjectHandle, 1);
}

static RVMVMState* state_arg(PyObject* obj, const char* what) {
  RVMVMState* state = PyObject_TypeCheck(obj, &ObjectBaseType)
                          ? rvm_vm_state_of((RVMValue){.v_handle = ((ObjectObject*)obj)->obj},
                                            kRVMObjectHandle)
                          : NULL;
  if (state == NULL) PyErr_Format(PyExc_TypeError, "%s: expected a VM state", what);
  return state;
}

/* The python engine's runs: kernel_context_enter(state) -> token, kernel_context_exit(state,
 * token), and kernel_context_check(state) at its steps. */
static PyObject* kernel_context_enter(PyObject* module, PyObject* obj) {
  RVMVMState* state = state_arg(obj, "kernel_context_enter");
  return state == NULL ? NULL : PyLong_FromVoidPtr(rvm_kernel_context_enter(state));
}

static PyObject* kernel_context_exit(PyObject* module, PyObject* args) {
  PyObject *obj, *token;
  if (!PyArg_ParseTuple(args, "OO:kernel_context_exit", &obj, &token)) return NULL;
  RVMVMState* state = state_arg(obj, "kernel_context_exit");
  void* previous = token == Py_None ? NULL : PyLong_AsVoidPtr(token);
  if (state == NULL || PyErr_Occurred()) return NULL;
  rvm_kernel_context_exit(state, (RVMKernelContext*)previous);
  Py_RETURN_NONE;
}

static PyObject* kernel_context_check(PyObject* module, PyObject* obj) {
  RVMVMState* state = state_arg(obj, "kernel_context_check");
  if (state == NULL) return NULL;
  if (__atomic_load_n(&state->kernels.cancel, __ATOMIC_RELAXED) == 0) Py_RETURN_NONE;
  rvm_kernel_context_raise(&state->kernels);
  return NULL;
}

/* Python-target kernels' allocations: kernel_workspace_claim(nbytes, kernel) charges the
 * running VM's memory_limit (the memory_limit error past it) and returns the token that
 * kernel_workspace_release(token, nbytes) gives back when the buffer dies. */
static PyObject* kernel_workspace_claim(PyObject* module, PyObject* args) {
  long long nbytes;
  const char* kernel;
  if (!PyArg_ParseTuple(args, "Ls:kernel_workspace_claim", &nbytes, &kernel)) return NULL;
  RVMVMState* budget = (RVMVMState*)RVMBackendGetContext()->budget;
  if (budget == NULL || budget->memory_limit == 0) return PyLong_FromLong(0);
  if (rvm_vm_claim(budget, (int64_t)nbytes, kernel) != 0) return rvm_raise_last_error();
  RVMObjectRetain(&budget->header);
  return PyLong_FromVoidPtr(budget);
}

static PyObject* kernel_workspace_release(PyObject* module, PyObject* args) {
  PyObject* token;
  long long nbytes;
  if (!PyArg_ParseTuple(args, "OL:kernel_workspace_release", &token, &nbytes)) return NULL;
  RVMVMState* budget = (RVMVMState*)PyLong_AsVoidPtr(token);
  if (PyErr_Occurred()) return NULL;
  if (budget != NULL) {
    __atomic_sub_fetch(&budget->in_use, (int64_t)nbytes, __ATOMIC_RELAXED);
    RVMObjectFree(&budget->header);
  }
  Py_RETURN_NONE;
}

static PyObject* vm_state_stats(PyObject* module, PyObject* obj) {
  RVMVMState* state = state_arg(obj, "vm_state_stats");
  if (state == NULL) return NULL;
  PyObject* out = PyList_New(state->num_devices);
  for (int32_t d = 0; out != NULL && d < state->num_devices; ++d) {
    RVMVMStoragePool* p = &state->pools[d];
    PyObject* item = Py_BuildValue("(LLLNL)", (long long)p->requests,
                                   (long long)p->allocations, (long long)p->bytes_allocated,
                                   PyBool_FromLong(p->naive),
                                   (long long)__atomic_load_n(&state->in_use, __ATOMIC_RELAXED));
    if (item == NULL) Py_CLEAR(out);
    else PyList_SET_ITEM(out, d, item);
  }
  return out;
}

static PyMethodDef vm_functions[] = {
    {"vm_state", vm_state, METH_VARARGS,
     "vm_state(num_devices, naive, memory_limit=0, step_limit=0, time_limit=0.0): a VM state "
     "with a storage pool per device; its pools hold at most memory_limit bytes at once, and "
     "its kernels' context carries the step and time limits (0: no limit)."},
    {"kernel_context_enter", kernel_context_enter, METH_O,
     "Makes the VM state's kernel context this thread's for a run; the token to restore."},
    {"kernel_context_exit", kernel_context_exit, METH_VARARGS,
     "kernel_context_exit(state, token): ends the run entered with kernel_context_enter."},
    {"kernel_context_check", kernel_context_check, METH_O,
     "Raises the error of a cancelled run (time_limit, Ctrl-C); None otherwise."},
    {"kernel_workspace_claim", kernel_workspace_claim, METH_VARARGS,
     "kernel_workspace_claim(nbytes, kernel): charges the running VM's memory_limit; a token."},
    {"kernel_workspace_release", kernel_workspace_release, METH_VARARGS,
     "kernel_workspace_release(token, nbytes): gives back what kernel_workspace_claim took."},
    {"vm_state_stats", vm_state_stats, METH_O,
     "[(requests, allocations, bytes allocated, naive, bytes the VM's pools hold)] of each "
     "device's pool."},
    {NULL},
};

int rvm_vm_install(PyObject* module) {
  if (rvm_vm_register_builtins() != 0) {
    rvm_raise_last_error();
    return -1;
  }
  if (rvm_kernel_context_install() != 0) return -1;
  if (PyType_Ready(&RVMNativeVMType) < 0 || PyType_Ready(&RVMNativeEntryType) < 0 ||
      PyModule_AddFunctions(module, vm_functions) < 0)
    return -1;
  Py_INCREF(&RVMNativeVMType);
  if (PyModule_AddObject(module, "NativeVM", (PyObject*)&RVMNativeVMType) < 0) {
    Py_DECREF(&RVMNativeVMType);
    return -1;
  }
  return 0;
}
