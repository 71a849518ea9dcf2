/* Values crossing between Python and the native engine's registers: boxes of
 * Python objects, conversions both ways. */
#include <stdlib.h>

#include "vm_engine.h"

/* Same layout as the bridge's box of a Python object (py_convert.c), so that
 * rvm_value_to_py hands the object itself back to Python. */
typedef struct {
  RVMObject header;
  PyObject* obj;
} VMPyBox;

static void delete_box(RVMObject* obj) {
  PyGILState_STATE st = PyGILState_Ensure();
  Py_DECREF(((VMPyBox*)obj)->obj);
  PyGILState_Release(st);
  free(obj);
}

RVMObject* rvm_vm_box(PyObject* obj) {
  VMPyBox* box = (VMPyBox*)malloc(sizeof(VMPyBox));
  if (box == NULL) {
    PyErr_NoMemory();
    return NULL;
  }
  rvm_object_init(&box->header, kRVMObjectPython, delete_box);
  Py_INCREF(obj);
  box->obj = obj;
  return &box->header;
}

PyObject* rvm_vm_box_object(RVMObject* box) { return ((VMPyBox*)box)->obj; }

int rvm_vm_is_box(RVMValue v, int code) {
  return code == kRVMObjectHandle && v.v_handle != NULL &&
         ((RVMObject*)v.v_handle)->type_index == kRVMObjectPython;
}

/* Converts through the bridge: shapes, dtypes, devices. */
static int bridge_convert(PyObject* obj, RVMValue* v, int* code) {
  RVMByteArray bytes;
  PyObject* keep = NULL;
  ArgSlots slots = {v, code, &bytes, &keep};
  if (rvm_py_to_value(obj, &slots, 0, NULL, 0) != 0) return -1;
  if (keep != NULL || *code == kRVMStr || *code == kRVMBytes) {
    /* The value points into a Python object: keep that object instead. */
    RVMValueRelease(*v, *code);
    Py_XDECREF(keep);
    RVMObject* box = rvm_vm_box(obj);
    if (box == NULL) return -1;
    v->v_handle = box;
    *code = kRVMObjectHandle;
  }
  return 0;
}

int rvm_vm_from_py(PyObject* obj, RVMValue* v, int* code) {
  PyTypeObject* tp = Py_TYPE(obj);
  if (PyObject_TypeCheck(obj, &NDArrayBaseType) && ((NDArrayObject*)obj)->arr != NULL) {
    RVMNDArray* arr = ((NDArrayObject*)obj)->arr;
    RVMObjectRetain(&arr->header);
    v->v_handle = arr;
    *code = kRVMNDArrayHandle;
    return 0;
  }
  if (tp == &PyLong_Type) {
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (overflow == 0) {
      if (x == -1 && PyErr_Occurred()) return -1;
      v->v_int64 = x;
      *code = kRVMInt;
      return 0;
    }
  } else if (tp == &PyFloat_Type) {
    v->v_float64 = PyFloat_AS_DOUBLE(obj);
    *code = kRVMFloat;
    return 0;
  } else if (obj == Py_None) {
    v->v_int64 = 0;
    *code = kRVMNull;
    return 0;
  } else if (tp == &PyBool_Type) {
    v->v_int64 = obj == Py_True;
    *code = kRVMBool;
    return 0;
  } else if (tp == &PackedFuncType) {
    RVMObject* h = rvm_packed_func_handle((PackedFuncObject*)obj);
    if (h == NULL) return -1;
    RVMObjectRetain(h);
    v->v_handle = h;
    *code = kRVMPackedFuncHandle;
    return 0;
  } else if (tp == rvm_hooks.shape_tuple_type || tp == rvm_hooks.datatype_type ||
             tp == rvm_hooks.device_type) {
    return bridge_convert(obj, v, code);
  }
  RVMObject* box = rvm_vm_box(obj);
  if (box == NULL) return -1;
  v->v_handle = box;
  *code = kRVMObjectHandle;
  return 0;
}

/* Register value -> Python (new reference); the VM state is the Python VM. */
PyObject* rvm_vm_to_py(RVMVirtualMachine* vm, RVMValue v, int code, int steal) {
  if (code == kRVMOpaqueHandle && v.v_handle == vm) {
    Py_INCREF(vm->vm);
    return vm->vm;
  }
  return rvm_value_to_py(v, code, steal);
}

/* Strings and borrowed tensors returned by callees do not outlive the call:
 * registers keep them as Python objects. */
int rvm_vm_own_result(RVMValue* v, int* code) {
  if (*code != kRVMStr && *code != kRVMBytes && *code != kRVMDLTensorHandle) return 0;
  PyObject* obj = rvm_value_to_py(*v, *code, 0);
  if (obj == NULL) return -1;
  int rc = rvm_vm_from_py(obj, v, code);
  Py_DECREF(obj);
  return rc;
}

int rvm_vm_arg_from_py(RVMVirtualMachine* vm, PyObject* obj, RVMValue* v, int* code) {
  if (vm->numpy_types != NULL && !PyObject_TypeCheck(obj, &NDArrayBaseType)) {
    int is_numpy = PyObject_IsInstance(obj, vm->numpy_types);
    if (is_numpy < 0) return -1;
    if (is_numpy) {
      PyObject* converted = PyObject_CallOneArg(vm->to_runtime, obj);
      if (converted == NULL) return -1;
      int rc = rvm_vm_from_py(converted, v, code);
      Py_DECREF(converted);
      return rc;
    }
  }
  return rvm_vm_from_py(obj, v, code);
}

