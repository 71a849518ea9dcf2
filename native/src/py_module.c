/* The Python module of the bridge: registry access, library loading, tensors. */
#include <dlfcn.h>

#include "py_bridge.h"

int rvm_vm_install(PyObject* module); /* py_vm.c */

static PyObject* set_hooks(PyObject* self, PyObject* args, PyObject* kwargs) {
  static char* kwlist[] = {"ndarray_type", "shape_tuple_type", "datatype_type", "device_type",
                           "make_array", "make_dtype", "make_device", "fallback", "error_type",
                           NULL};
  BridgeHooks h;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O!O!O!OOOOO:_set_hooks", kwlist, &PyType_Type,
                                   &h.ndarray_type, &PyType_Type, &h.shape_tuple_type,
                                   &PyType_Type, &h.datatype_type, &PyType_Type, &h.device_type,
                                   &h.make_array, &h.make_dtype, &h.make_device, &h.fallback,
                                   &h.error_type))
    return NULL;
  if (!PyType_IsSubtype(h.ndarray_type, &NDArrayBaseType)) {
    return PyErr_Format(PyExc_TypeError, "ndarray_type must subclass NDArrayBase");
  }
  Py_INCREF(h.ndarray_type);
  Py_INCREF(h.shape_tuple_type);
  Py_INCREF(h.datatype_type);
  Py_INCREF(h.device_type);
  Py_INCREF(h.make_array);
  Py_INCREF(h.make_dtype);
  Py_INCREF(h.make_device);
  Py_INCREF(h.fallback);
  Py_INCREF(h.error_type);
  rvm_hooks = h;
  Py_RETURN_NONE;
}

static PyObject* func_get_global(PyObject* self, PyObject* name) {
  const char* s = PyUnicode_AsUTF8(name);
  if (s == NULL) return NULL;
  RVMObject* h;
  RVMFuncGetGlobal(s, &h);
  if (h == NULL) Py_RETURN_NONE;
  PackedFuncObject* f = (PackedFuncObject*)rvm_packed_func_from_handle(h, 1);
  if (f != NULL) {
    Py_INCREF(name);
    f->name = name;
  }
  return (PyObject*)f;
}

static PyObject* func_register_global(PyObject* self, PyObject* args) {
  PyObject* name;
  PyObject* func;
  int override;
  if (!PyArg_ParseTuple(args, "UOp:func_register_global", &name, &func, &override)) return NULL;
  PyObject* packed = rvm_packed_func_from_callable(func, name);
  if (packed == NULL) return NULL;
  RVMObject* h = rvm_packed_func_handle((PackedFuncObject*)packed);
  int rc = h != NULL ? RVMFuncRegisterGlobal(PyUnicode_AsUTF8(name), h, override) : -1;
  if (rc != 0) {
    Py_DECREF(packed);
    return h != NULL ? rvm_raise_last_error() : NULL;
  }
  return packed;
}

static PyObject* func_remove_global(PyObject* self, PyObject* name) {
  const char* s = PyUnicode_AsUTF8(name);
  if (s == NULL) return NULL;
  if (RVMFuncRemoveGlobal(s) != 0) return rvm_raise_last_error();
  Py_RETURN_NONE;
}

static PyObject* func_list_global_names(PyObject* self, PyObject* unused) {
  int n;
  const char** names;
  if (RVMFuncListGlobalNames(&n, &names) != 0) return rvm_raise_last_error();
  PyObject* list = PyList_New(n);
  if (list == NULL) return NULL;
  for (int i = 0; i < n; ++i) {
    PyObject* s = PyUnicode_FromString(names[i]);
    if (s == NULL) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, i, s);
  }
  return list;
}

static PyObject* func_from_address(PyObject* self, PyObject* args) {
  unsigned long long address;
  PyObject* name = Py_None;
  if (!PyArg_ParseTuple(args, "K|O:func_from_address", &address, &name)) return NULL;
  RVMObject* h;
  if (RVMFuncCreateFromCFunc((RVMPackedCFunc)(uintptr_t)address, NULL, NULL, &h) != 0)
    return rvm_raise_last_error();
  /* A kernel library's function: it takes the GIL itself for what it calls back (registered
   * Python functions go through the trampoline), as when the VM calls it without the GIL. */
  ((RVMFunctionObj*)h)->releases_gil = 1;
  PackedFuncObject* f = (PackedFuncObject*)rvm_packed_func_from_handle(h, 1);
  if (f != NULL && name != Py_None) {
    Py_INCREF(name);
    f->name = name;
  }
  return (PyObject*)f;
}

static PyObject* load_library(PyObject* self, PyObject* path_obj) {
  const char* path = PyUnicode_AsUTF8(path_obj);
  if (path == NULL) return NULL;
  free(rvm_take_load_errors());
  /* RTLD_GLOBAL: a library's functions may call into the runtime and each other. */
  void* handle = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (handle == NULL) {
    const char* err = dlerror();
    return PyErr_Format(PyExc_OSError, "cannot load library '%s': %s", path,
                        err != NULL ? err : "unknown error");
  }
  char* errors = rvm_take_load_errors();
  if (errors != NULL) {
    PyObject* exc = PyErr_Format(PyExc_ValueError, "loading '%s' failed to register: %s", path, errors);
    free(errors);
    return exc;
  }
  return PyLong_FromVoidPtr(handle);
}

/* Reads a sequence of ints into *shape: stack when it has room, else PyMem heap. */
static int parse_shape(PyObject* obj, int64_t* stack, int64_t** shape, Py_ssize_t* ndim) {
  PyObject* fast = PySequence_Fast(obj, "shape must be a sequence of ints");
  if (fast == NULL) return -1;
  *ndim = PySequence_Fast_GET_SIZE(fast);
  *shape = *ndim <= 8 ? stack : (int64_t*)PyMem_Malloc(sizeof(int64_t) * (size_t)*ndim);
  if (*shape == NULL) {
    Py_DECREF(fast);
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < *ndim; ++i) {
    (*shape)[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, i));
    if ((*shape)[i] == -1 && PyErr_Occurred()) {
      Py_DECREF(fast);
      if (*shape != stack) PyMem_Free(*shape);
      return -1;
    }
  }
  Py_DECREF(fast);
  return 0;
}

static PyObject* ndarray_empty(PyObject* self, PyObject* args) {
  PyObject* shape_obj;
  int code, bits, lanes, device_type, device_id;
  if (!PyArg_ParseTuple(args, "Oiiiii:ndarray_empty", &shape_obj, &code, &bits, &lanes,
                        &device_type, &device_id))
    return NULL;
  int64_t stack[8];
  int64_t* shape;
  Py_ssize_t ndim;
  if (parse_shape(shape_obj, stack, &shape, &ndim) != 0) return NULL;
  DLDataType dtype = {(uint8_t)code, (uint8_t)bits, (uint16_t)lanes};
  DLDevice device = {device_type, device_id};
  RVMNDArray* arr;
  int rc = RVMArrayAlloc(shape, (int)ndim, dtype, device, &arr);
  if (shape != stack) PyMem_Free(shape);
  if (rc != 0) return rvm_raise_last_error();
  return rvm_ndarray_wrap(arr, 1);
}

static PyObject* ndarray_from_dlpack(PyObject* self, PyObject* capsule) {
  RVMNDArray* arr;
  int rc;
  /* Each capsule is renamed before use: from then on the tensor is ours. */
  if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
    DLManagedTensorVersioned* managed =
        (DLManagedTensorVersioned*)PyCapsule_GetPointer(capsule, "dltensor_versioned");
    if (PyCapsule_SetName(capsule, "used_dltensor_versioned") != 0) return NULL;
    rc = RVMNDArrayFromDLPackVersioned(managed, &arr);
  } else if (PyCapsule_IsValid(capsule, "dltensor")) {
    DLManagedTensor* managed = (DLManagedTensor*)PyCapsule_GetPointer(capsule, "dltensor");
    if (PyCapsule_SetName(capsule, "used_dltensor") != 0) return NULL;
    rc = RVMNDArrayFromDLPack(managed, &arr);
  } else {
    return PyErr_Format(PyExc_TypeError,
                        "from_dlpack expects an unused DLPack capsule, got '%s'",
                        Py_TYPE(capsule)->tp_name);
  }
  if (rc != 0) return rvm_raise_last_error();
  return rvm_ndarray_wrap(arr, 1);
}

static PyObject* ndarray_view(PyObject* self, PyObject* args) {
  /* view(base, byte_offset, shape, code, bits, lanes): a tensor sharing base's memory. */
  NDArrayObject* base;
  long long offset;
  PyObject* shape_obj;
  int code, bits, lanes;
  if (!PyArg_ParseTuple(args, "O!LOiii:ndarray_view", &NDArrayBaseType, &base, &offset,
                        &shape_obj, &code, &bits, &lanes))
    return NULL;
  if (base->arr == NULL) return PyErr_Format(PyExc_ValueError, "view of an empty NDArray");
  int64_t stack[8];
  int64_t* shape;
  Py_ssize_t ndim;
  if (parse_shape(shape_obj, stack, &shape, &ndim) != 0) return NULL;
  DLTensor* t = &base->arr->dl;
  DLDataType dtype = {(uint8_t)code, (uint8_t)bits, (uint16_t)lanes};
  int64_t base_bytes = RVMDataSize(t->shape, t->ndim, t->dtype);
  int64_t need = RVMDataSize(shape, (int)ndim, dtype);
  PyObject* result = NULL;
  RVMNDArray* arr;
  if (need < 0) {
    PyErr_Format(PyExc_ValueError, "a view of shape %R: its byte size overflows int64",
                 shape_obj);
  } else if (base_bytes < 0 || offset < 0 || offset > base_bytes || need > base_bytes - offset) {
    PyErr_Format(PyExc_ValueError,
                 "a view of %lld bytes at offset %lld does not fit in a tensor of %lld bytes",
                 (long long)need, offset, (long long)base_bytes);
  } else if (RVMNDArrayCreateView(&base->arr->header, (char*)t->data + t->byte_offset + offset,
                                  shape, (int)ndim, dtype, t->device, &arr) != 0) {
    rvm_raise_last_error();
  } else {
    result = rvm_ndarray_wrap(arr, 1);
  }
  if (shape != stack) PyMem_Free(shape);
  return result;
}

static PyMethodDef bridge_methods[] = {
    {"_set_hooks", (PyCFunction)(void (*)(void))set_hooks, METH_VARARGS | METH_KEYWORDS,
     "Installs the Python classes the bridge creates and accepts."},
    {"func_get_global", func_get_global, METH_O, "Looks a global function up; None if missing."},
    {"func_register_global", func_register_global, METH_VARARGS,
     "Registers a callable under a name; returns the PackedFunc."},
    {"func_remove_global", func_remove_global, METH_O, "Removes a global function."},
    {"func_list_global_names", func_list_global_names, METH_NOARGS, "Names of all global functions."},
    {"func_from_address", func_from_address, METH_VARARGS,
     "A PackedFunc calling the packed C function at an address."},
    {"load_library", load_library, METH_O, "dlopens a shared library, running its registrations."},
    {"ndarray_empty", ndarray_empty, METH_VARARGS, "A new uninitialised, 64-byte aligned tensor."},
    {"ndarray_from_dlpack", ndarray_from_dlpack, METH_O, "Takes over a DLPack capsule."},
    {"ndarray_view", ndarray_view, METH_VARARGS, "A tensor sharing another's memory."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef bridge_module = {
    PyModuleDef_HEAD_INIT, "rvm.runtime._bridge",
    "CPython bridge of the rvm native runtime.", -1, bridge_methods,
};

/* Called once through cffi: builds the bridge module and installs it in
 * sys.modules under module_name. cffi calls C without the GIL, so take it. */
int rvm_bridge_install(const char* module_name) {
  PyGILState_STATE st = PyGILState_Ensure();
  int rc = -1;
  PyObject* mod = NULL;
  if (PyType_Ready(&PackedFuncType) < 0 || PyType_Ready(&NDArrayBaseType) < 0 ||
      PyType_Ready(&ObjectBaseType) < 0)
    goto out;
  mod = PyModule_Create(&bridge_module);
  if (mod == NULL) goto out;
  Py_INCREF(&PackedFuncType);
  Py_INCREF(&NDArrayBaseType);
  Py_INCREF(&ObjectBaseType);
  if (PyModule_AddObject(mod, "PackedFunc", (PyObject*)&PackedFuncType) < 0 ||
      PyModule_AddObject(mod, "NDArrayBase", (PyObject*)&NDArrayBaseType) < 0 ||
      PyModule_AddObject(mod, "Object", (PyObject*)&ObjectBaseType) < 0)
    goto out;
  if (rvm_vm_install(mod) < 0) goto out; /* the native VM engine (py_vm.c) */
  PyObject* modules = PyImport_GetModuleDict();
  if (PyDict_SetItemString(modules, module_name, mod) < 0) goto out;
  rc = 0;
out:
  if (rc != 0) PyErr_Print();
  Py_XDECREF(mod);
  PyGILState_Release(st);
  return rc;
}
