/* The Python face of the native engine: rvm.runtime._bridge.NativeVM (built by
 * rvm.vm.native from an Executable and its resolved function pool) and the
 * callables of its functions, NativeEntry. */
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

static int init_constants(RVMVirtualMachine* vm, PyObject* constants) {
  if (!PyList_Check(constants)) {
    PyErr_SetString(PyExc_TypeError, "NativeVM: constants must be a list");
    return -1;
  }
  Py_INCREF(constants);
  vm->const_list = constants;
  Py_ssize_t n = PyList_GET_SIZE(constants);
  vm->const_values = (RVMValue*)calloc((size_t)(n > 0 ? n : 1), sizeof(RVMValue));
  vm->const_codes = (int*)calloc((size_t)(n > 0 ? n : 1), sizeof(int));
  vm->const_bytes = (RVMByteArray*)calloc((size_t)(n > 0 ? n : 1), sizeof(RVMByteArray));
  if (vm->const_values == NULL || vm->const_codes == NULL || vm->const_bytes == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* obj = PyList_GET_ITEM(constants, i);
    RVMValue* v = &vm->const_values[i];
    int* code = &vm->const_codes[i];
    /* Strings and bytes point into the constants list, which the engine keeps. */
    if (PyUnicode_CheckExact(obj)) {
      v->v_str = PyUnicode_AsUTF8(obj);
      if (v->v_str == NULL) return -1;
      *code = kRVMStr;
    } else if (PyBytes_CheckExact(obj)) {
      vm->const_bytes[i].data = PyBytes_AS_STRING(obj);
      vm->const_bytes[i].size = (size_t)PyBytes_GET_SIZE(obj);
      v->v_handle = &vm->const_bytes[i];
      *code = kRVMBytes;
    } else if (rvm_vm_from_py(obj, v, code) != 0) {
      return -1;
    }
    vm->num_consts = (int32_t)(i + 1);
  }
  return 0;
}

static int init_pool(RVMVirtualMachine* vm, PyObject* pool) {
  for (int32_t i = 0; i < vm->num_funcs; ++i) {
    PyObject* entry = PyList_GET_ITEM(pool, i);
    int kind;
    const char* name;
    PyObject *py, *packed;
    if (!PyTuple_Check(entry) || !PyArg_ParseTuple(entry, "isOO", &kind, &name, &py, &packed)) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "NativeVM: bad pool entry");
      return -1;
    }
    RVMVMCallee* c = &vm->pool[i];
    c->kind = kind;
    if (py != Py_None) {
      Py_INCREF(py);
      c->py = py;
    }
    if (packed != Py_None) {
      if (Py_TYPE(packed) != &PackedFuncType) {
        PyErr_Format(PyExc_TypeError, "NativeVM: pool entry %d: expected a PackedFunc", (int)i);
        return -1;
      }
      Py_INCREF(packed);
      c->packed = packed;
      c->handle = rvm_packed_func_handle((PackedFuncObject*)packed);
      if (c->handle == NULL) return -1;
    }
    if (kind == kVMCalleeNative && strcmp(name, "vm.builtin.invoke_closure") == 0) {
      c->kind = kVMCalleeInvoke;
    } else if (kind == kVMCalleeNative) {
      c->native = rvm_vm_find_builtin(name);
      if (c->native == NULL) c->kind = kVMCalleePy;
    }
    if (kind == kVMCalleeVM && c->py != NULL) {
      c->box = rvm_vm_box(c->py);
      if (c->box == NULL) return -1;
    }
    if (c->kind == kVMCalleeC) {
      if (c->handle == NULL) {
        PyErr_Format(PyExc_TypeError, "NativeVM: C callee '%s' needs a PackedFunc", name);
        return -1;
      }
      c->cfunc = ((RVMFunctionObj*)c->handle)->func;
      c->resource = ((RVMFunctionObj*)c->handle)->resource;
    }
    if (c->kind != kVMCalleeVM && c->kind != kVMCalleeC && c->py == NULL) {
      PyErr_Format(PyExc_TypeError, "NativeVM: callee '%s' needs a Python callable", name);
      return -1;
    }
    if (c->kind < kVMCalleeVM || c->kind > kVMCalleeInvoke) {
      PyErr_Format(PyExc_ValueError, "NativeVM: unknown callee kind %d", kind);
      return -1;
    }
  }
  return 0;
}

static int init_functions(RVMVirtualMachine* vm, PyObject* functions) {
  for (int32_t i = 0; i < vm->num_funcs; ++i) {
    const char* name;
    int is_vm, num_args, num_regs;
    PyObject* words;
    PyObject* entry = PyList_GET_ITEM(functions, i);
    if (!PyTuple_Check(entry) ||
        !PyArg_ParseTuple(entry, "siiiO", &name, &is_vm, &num_args, &num_regs, &words)) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "NativeVM: bad function entry");
      return -1;
    }
    RVMVMFunc* f = &vm->funcs[i];
    f->name = strdup(name);
    if (f->name == NULL) {
      PyErr_NoMemory();
      return -1;
    }
    f->is_vm = is_vm;
    f->num_args = num_args;
    f->num_regs = num_regs;
    if (is_vm && vm->pool[i].kind != kVMCalleeVM) {
      PyErr_Format(PyExc_ValueError, "NativeVM: function '%s' is VM code but its pool entry is not",
                   name);
      return -1;
    }
  }
  for (int32_t i = 0; i < vm->num_funcs; ++i) {
    PyObject* entry = PyList_GET_ITEM(functions, i);
    if (vm->funcs[i].is_vm && rvm_vm_decode_function(vm, i, PyTuple_GET_ITEM(entry, 4)) != 0)
      return -1;
  }
  return 0;
}

static PyObject* native_vm_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject *pyvm, *functions, *constants, *pool, *helpers;
  int naive, num_devices;
  if (!PyArg_ParseTuple(args, "OO!O!O!iiO!:NativeVM", &pyvm, &PyList_Type, &functions,
                        &PyList_Type, &constants, &PyList_Type, &pool, &naive, &num_devices,
                        &PyTuple_Type, &helpers))
    return NULL;
  if (PyList_GET_SIZE(functions) != PyList_GET_SIZE(pool) || num_devices < 1 ||
      PyTuple_GET_SIZE(helpers) != 7) {
    return PyErr_Format(PyExc_ValueError,
                        "NativeVM: functions and pool must have one entry per function, "
                        "num_devices >= 1 and helpers 7 entries");
  }
  NativeVMObject* self = (NativeVMObject*)type->tp_alloc(type, 0);
  if (self == NULL) return NULL;
  RVMVirtualMachine* vm = &self->vm;
  memset(vm, 0, sizeof(*vm));
  PyObject** slots[] = {&vm->describe, &vm->truth, &vm->to_runtime, &vm->check_args,
                        &vm->fallback, &vm->numpy_types, &vm->closure_type};
  for (int k = 0; k < 7; ++k) {
    *slots[k] = PyTuple_GET_ITEM(helpers, k);
    Py_INCREF(*slots[k]);
  }
  Py_INCREF(pyvm);
  vm->vm = pyvm;
  vm->num_funcs = (int32_t)PyList_GET_SIZE(functions);
  size_t nfuncs = (size_t)(vm->num_funcs > 0 ? vm->num_funcs : 1);
  vm->funcs = (RVMVMFunc*)calloc(nfuncs, sizeof(RVMVMFunc));
  vm->pool = (RVMVMCallee*)calloc(nfuncs, sizeof(RVMVMCallee));
  vm->pools = (RVMVMStoragePool*)calloc((size_t)num_devices, sizeof(RVMVMStoragePool));
  if (vm->funcs == NULL || vm->pool == NULL || vm->pools == NULL) {
    PyErr_NoMemory();
    goto fail;
  }
  vm->num_devices = num_devices;
  for (int d = 0; d < num_devices; ++d) {
    DLDevice dev = {kDLCPU, d};
    rvm_vm_pool_init(&vm->pools[d], naive, dev);
  }
  if (init_constants(vm, constants) != 0 || init_pool(vm, pool) != 0 ||
      init_functions(vm, functions) != 0)
    goto fail;
  return (PyObject*)self;
fail:
  Py_DECREF(self);
  return NULL;
}

static int native_vm_traverse(NativeVMObject* self, visitproc visit, void* arg) {
  RVMVirtualMachine* vm = &self->vm;
  Py_VISIT(vm->vm);
  Py_VISIT(vm->const_list);
  Py_VISIT(vm->describe);
  Py_VISIT(vm->truth);
  Py_VISIT(vm->to_runtime);
  Py_VISIT(vm->check_args);
  Py_VISIT(vm->fallback);
  Py_VISIT(vm->numpy_types);
  Py_VISIT(vm->closure_type);
  if (vm->pool != NULL) {
    for (int32_t i = 0; i < vm->num_funcs; ++i) {
      Py_VISIT(vm->pool[i].py);
      Py_VISIT(vm->pool[i].packed);
      if (vm->pool[i].box != NULL) Py_VISIT(rvm_vm_box_object(vm->pool[i].box));
    }
  }
  if (vm->funcs != NULL) {
    for (int32_t i = 0; i < vm->num_funcs; ++i) {
      RVMVMFunc* f = &vm->funcs[i];
      for (int64_t k = 0; f->arg_py != NULL && k < f->num_arg_slots; ++k) Py_VISIT(f->arg_py[k]);
    }
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

static int usable(NativeVMObject* self) {
  if (self->vm.funcs == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "NativeVM: the engine has been released");
    return 0;
  }
  return 1;
}

static PyObject* native_vm_run(NativeVMObject* self, PyObject* const* args, Py_ssize_t n) {
  if (n < 1) return PyErr_Format(PyExc_TypeError, "run(index, *args) needs an index");
  long index = PyLong_AsLong(args[0]);
  if (index == -1 && PyErr_Occurred()) return NULL;
  if (!usable(self)) return NULL;
  if (index < 0 || index >= self->vm.num_funcs) {
    return PyErr_Format(PyExc_ValueError, "NativeVM.run: function index %ld out of range", index);
  }
  return rvm_vm_run(&self->vm, (int32_t)index, args + 1, n - 1);
}

static PyObject* entry_vectorcall(PyObject* callable, PyObject* const* args, size_t nargsf,
                                  PyObject* kwnames) {
  NativeEntryObject* e = (NativeEntryObject*)callable;
  RVMVirtualMachine* vm = &e->engine->vm;
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
    return PyErr_Format(PyExc_TypeError, "VM functions take positional arguments only");
  }
  if (!usable(e->engine)) return NULL;
  if (vm->use_python || n != vm->funcs[e->index].num_args) {
    /* The Python engine runs instrumented calls and reports wrong argument counts. */
    PyObject* tup = PyTuple_New(n);
    if (tup == NULL) return NULL;
    for (Py_ssize_t k = 0; k < n; ++k) {
      Py_INCREF(args[k]);
      PyTuple_SET_ITEM(tup, k, args[k]);
    }
    PyObject* callback = vm->use_python ? vm->fallback : vm->check_args;
    PyObject* res = PyObject_CallFunction(callback, "iO", (int)e->index, tup);
    Py_DECREF(tup);
    if (res == NULL || vm->use_python) return res;
    Py_DECREF(res);
  }
  return rvm_vm_run(vm, e->index, args, n);
}

static PyObject* native_vm_entry(NativeVMObject* self, PyObject* arg) {
  long index = PyLong_AsLong(arg);
  if (index == -1 && PyErr_Occurred()) return NULL;
  if (!usable(self)) return NULL;
  if (index < 0 || index >= self->vm.num_funcs || !self->vm.funcs[index].is_vm) {
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

static PyObject* native_vm_memory_stats(NativeVMObject* self, PyObject* unused) {
  PyObject* out = PyList_New(self->vm.num_devices);
  if (out == NULL) return NULL;
  for (int32_t d = 0; d < self->vm.num_devices; ++d) {
    RVMVMStoragePool* p = &self->vm.pools[d];
    PyObject* item = Py_BuildValue("(LLL)", (long long)p->requests, (long long)p->allocations,
                                   (long long)p->bytes_allocated);
    if (item == NULL) {
      Py_DECREF(out);
      return NULL;
    }
    PyList_SET_ITEM(out, d, item);
  }
  return out;
}

static PyObject* native_vm_get_use_python(NativeVMObject* self, void* closure) {
  return PyBool_FromLong(self->vm.use_python);
}

static int native_vm_set_use_python(NativeVMObject* self, PyObject* value, void* closure) {
  int flag = value != NULL ? PyObject_IsTrue(value) : 0;
  if (flag < 0) return -1;
  self->vm.use_python = flag;
  return 0;
}

static PyObject* native_vm_get_release_gil(NativeVMObject* self, void* closure) {
  return PyBool_FromLong(self->vm.release_gil);
}

static int native_vm_set_release_gil(NativeVMObject* self, PyObject* value, void* closure) {
  int flag = value != NULL ? PyObject_IsTrue(value) : 0;
  if (flag < 0) return -1;
  self->vm.release_gil = flag;
  return 0;
}

static PyMethodDef native_vm_methods[] = {
    {"run", (PyCFunction)(void (*)(void))native_vm_run, METH_FASTCALL,
     "run(index, *args): runs VM function index."},
    {"entry", (PyCFunction)native_vm_entry, METH_O, "A callable running VM function index."},
    {"memory_stats", (PyCFunction)native_vm_memory_stats, METH_NOARGS,
     "(requests, allocations, bytes allocated) of each device's storage pool."},
    {NULL},
};

static PyGetSetDef native_vm_getset[] = {
    {"use_python", (getter)native_vm_get_use_python, (setter)native_vm_set_use_python,
     "Whether entries run on the Python engine (instrumentation).", NULL},
    {"release_gil", (getter)native_vm_get_release_gil, (setter)native_vm_set_release_gil,
     "Whether C callees (kernels) run without the GIL.", NULL},
    {NULL},
};

PyTypeObject RVMNativeVMType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "rvm.runtime.NativeVM",
    .tp_doc = "The native VM engine over one executable (see rvm.vm.native).",
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

PyTypeObject RVMNativeEntryType = {
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

int rvm_vm_install(PyObject* module) {
  if (PyType_Ready(&RVMNativeVMType) < 0 || PyType_Ready(&RVMNativeEntryType) < 0) return -1;
  Py_INCREF(&RVMNativeVMType);
  if (PyModule_AddObject(module, "NativeVM", (PyObject*)&RVMNativeVMType) < 0) {
    Py_DECREF(&RVMNativeVMType);
    return -1;
  }
  return 0;
}
