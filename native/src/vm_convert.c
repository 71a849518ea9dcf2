/* Values crossing between Python and the native engine's registers. Registers own
 * their references; Python values with no native form live there as boxes. */
#include "vm_engine.h"

/* Shapes, dtypes and devices convert through the bridge. */
static int bridge_convert(PyObject* obj, RVMValue* v, int* code) {
  RVMByteArray bytes;
  PyObject* keep = NULL;
  ArgSlots slots = {v, code, &bytes, &keep};
  if (rvm_py_to_value(obj, &slots, 0, NULL, 0) != 0) return -1;
  if (keep != NULL || *code == kRVMStr || *code == kRVMBytes) {
    /* The value points into a Python object: keep that object instead. */
    RVMValueRelease(*v, *code);
    Py_XDECREF(keep);
    RVMObject* box = rvm_py_box(obj);
    if (box == NULL) return -1;
    v->v_handle = box;
    *code = kRVMObjectHandle;
  }
  return 0;
}

static int take_object(RVMObject* obj, int type_code, RVMValue* v, int* code) {
  RVMObjectRetain(obj);
  v->v_handle = obj;
  *code = type_code;
  return 0;
}

int rvm_vm_from_py(PyObject* obj, RVMValue* v, int* code) {
  PyTypeObject* tp = Py_TYPE(obj);
  if (PyObject_TypeCheck(obj, &NDArrayBaseType) && ((NDArrayObject*)obj)->arr != NULL)
    return take_object(&((NDArrayObject*)obj)->arr->header, kRVMNDArrayHandle, v, code);
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
    return h == NULL ? -1 : take_object(h, kRVMPackedFuncHandle, v, code);
  } else if (tp == &ObjectBaseType) {
    return take_object(((ObjectObject*)obj)->obj, kRVMObjectHandle, v, code);
  } else if (tp == rvm_hooks.shape_tuple_type || tp == rvm_hooks.datatype_type ||
             tp == rvm_hooks.device_type) {
    return bridge_convert(obj, v, code);
  }
  RVMObject* box = rvm_py_box(obj);
  if (box == NULL) return -1;
  v->v_handle = box;
  *code = kRVMObjectHandle;
  return 0;
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
