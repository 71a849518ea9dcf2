/* Conversions between Python objects and packed values. */
#include "py_bridge.h"

#define MAX_NESTING 64

/* Python objects handed to C unchanged (IR nodes, dicts, ...). */
typedef struct {
  RVMObject header;
  PyObject* obj;
} PyObjectBox;

static void delete_py_box(RVMObject* obj) {
  PyObjectBox* box = (PyObjectBox*)obj;
  PyGILState_STATE st = PyGILState_Ensure();
  Py_DECREF(box->obj);
  PyGILState_Release(st);
  free(box);
}

RVMObject* rvm_py_box(PyObject* obj) {
  PyObjectBox* box = (PyObjectBox*)malloc(sizeof(PyObjectBox));
  if (box == NULL) {
    PyErr_NoMemory();
    return NULL;
  }
  rvm_object_init(&box->header, kRVMObjectPython, delete_py_box);
  Py_INCREF(obj);
  box->obj = obj;
  return &box->header;
}

PyObject* rvm_py_box_object(RVMObject* box) { return ((PyObjectBox*)box)->obj; }

const char* rvm_value_type_name(RVMValue v, int code) {
  static const char* names[] = {"NoneType", "int", "float", "bool", "str", "bytes", "handle",
                                "DLTensor", "DataType", "Device", "NDArray", "PackedFunc",
                                "ShapeTuple", "Array"};
  if (code >= 0 && code < (int)(sizeof(names) / sizeof(names[0]))) return names[code];
  if (code != kRVMObjectHandle || v.v_handle == NULL) return "unknown";
  switch (((RVMObject*)v.v_handle)->type_index) {
    case kRVMObjectStorage:
      return "Storage";
    case kRVMObjectVMState:
      return "VMState";
    case kRVMObjectPython: {
      /* A type's name lives as long as the type, which the boxed object keeps alive. */
      PyGILState_STATE st = PyGILState_Ensure();
      const char* name = Py_TYPE(rvm_py_box_object((RVMObject*)v.v_handle))->tp_name;
      PyGILState_Release(st);
      const char* dot = strrchr(name, '.');
      return dot != NULL ? dot + 1 : name;
    }
    default:
      return "Object";
  }
}

static const char* func_name(PackedFuncObject* f) {
  if (f != NULL && f->name != NULL && PyUnicode_Check(f->name)) {
    const char* s = PyUnicode_AsUTF8(f->name);
    if (s != NULL) return s;
    PyErr_Clear();
  }
  return "<anonymous>";
}

static void unsupported_type(PyObject* obj, PackedFuncObject* f, int i) {
  PyErr_Format(PyExc_TypeError,
               "packed function '%s': argument #%d has unsupported type '%s'; expected None, "
               "bool, int, float, str, bytes, NDArray, Device, DataType, ShapeTuple, "
               "PackedFunc or a tuple/list of these",
               func_name(f), i + 1, Py_TYPE(obj)->tp_name);
}

/* Asks rvm.runtime what obj stands for: a new reference to a replacement, to
 * obj itself (pass it as an opaque Python object), or NULL with an error. */
static PyObject* call_fallback(PyObject* obj, PackedFuncObject* f, int i, int for_c) {
  if (rvm_hooks.fallback == NULL) {
    unsupported_type(obj, f, i);
    return NULL;
  }
  PyObject* res = PyObject_CallFunction(rvm_hooks.fallback, "OO", obj, for_c ? Py_True : Py_False);
  if (res == NULL) return NULL;
  if (res == Py_NotImplemented) {
    Py_DECREF(res);
    unsupported_type(obj, f, i);
    return NULL;
  }
  return res;
}

static int to_int64(PyObject* obj, int64_t* out, PackedFuncObject* f, int i) {
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
  if (overflow != 0) {
    PyErr_Format(PyExc_OverflowError,
                 "packed function '%s': argument #%d, integer %R does not fit in int64",
                 func_name(f), i + 1, obj);
    return -1;
  }
  if (v == -1 && PyErr_Occurred()) return -1;
  *out = (int64_t)v;
  return 0;
}

static int attr_int(PyObject* obj, const char* name, long long* out) {
  PyObject* v = PyObject_GetAttrString(obj, name);
  if (v == NULL) return -1;
  *out = PyLong_AsLongLong(v);
  Py_DECREF(v);
  return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

static int shape_from_tuple(PyObject* tup, RVMShape** out, PackedFuncObject* f, int i) {
  Py_ssize_t n = PyTuple_GET_SIZE(tup);
  int64_t stack_dims[8];
  int64_t* dims = n <= 8 ? stack_dims : (int64_t*)PyMem_Malloc(sizeof(int64_t) * (size_t)n);
  if (dims == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  int rc = 0;
  for (Py_ssize_t k = 0; k < n && rc == 0; ++k) rc = to_int64(PyTuple_GET_ITEM(tup, k), &dims[k], f, i);
  if (rc == 0 && RVMShapeCreate(dims, n, out) != 0) {
    rvm_raise_last_error();
    rc = -1;
  }
  if (dims != stack_dims) PyMem_Free(dims);
  return rc;
}

static int array_from_sequence(PyObject* seq, RVMArray** out, PackedFuncObject* f, int i,
                               int depth) {
  PyObject* fast = PySequence_Fast(seq, "expected a sequence");
  if (fast == NULL) return -1;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  PyObject** items = PySequence_Fast_ITEMS(fast);
  size_t each = sizeof(RVMValue) + sizeof(int) + sizeof(RVMByteArray) + sizeof(PyObject*);
  char* scratch = (char*)PyMem_Malloc(each * (size_t)(n > 0 ? n : 1));
  if (scratch == NULL) {
    Py_DECREF(fast);
    PyErr_NoMemory();
    return -1;
  }
  ArgSlots slots;
  slots.values = (RVMValue*)scratch;
  slots.codes = (int*)(slots.values + n);
  slots.bytes = (RVMByteArray*)(scratch + (sizeof(RVMValue) + sizeof(int)) * (size_t)n);
  slots.keep = (PyObject**)(slots.bytes + n);
  int done = 0;
  int rc = 0;
  for (; done < n; ++done) {
    if (rvm_py_to_value(items[done], &slots, done, f, depth + 1) != 0) {
      rc = -1;
      break;
    }
  }
  if (rc == 0 && RVMArrayCreate(slots.values, slots.codes, n, out) != 0) {
    rvm_raise_last_error();
    rc = -1;
  }
  rvm_release_slots(&slots, done);
  PyMem_Free(scratch);
  Py_DECREF(fast);
  return rc;
}

int rvm_py_to_value(PyObject* obj, ArgSlots* slots, int i, PackedFuncObject* f, int depth) {
  RVMValue* v = &slots->values[i];
  int* code = &slots->codes[i];
  slots->keep[i] = NULL;
  *code = kRVMNull;
  if (depth > MAX_NESTING) {
    PyErr_Format(PyExc_TypeError, "packed function '%s': argument #%d is nested too deeply",
                 func_name(f), i + 1);
    return -1;
  }
  PyTypeObject* tp = Py_TYPE(obj);
  if (tp == &PyLong_Type) {
    *code = kRVMInt;
    return to_int64(obj, &v->v_int64, f, i);
  }
  if (tp == &PyFloat_Type) {
    *code = kRVMFloat;
    v->v_float64 = PyFloat_AS_DOUBLE(obj);
    return 0;
  }
  if (obj == Py_None) {
    v->v_int64 = 0;
    return 0;
  }
  if (tp == &PyBool_Type) {
    *code = kRVMBool;
    v->v_int64 = obj == Py_True;
    return 0;
  }
  if (tp == &PyUnicode_Type) {
    v->v_str = PyUnicode_AsUTF8(obj);
    if (v->v_str == NULL) return -1;
    *code = kRVMStr;
    return 0;
  }
  if (PyObject_TypeCheck(obj, &NDArrayBaseType)) {
    RVMNDArray* arr = ((NDArrayObject*)obj)->arr;
    if (arr == NULL) {
      PyErr_Format(PyExc_ValueError, "packed function '%s': argument #%d is an empty NDArray",
                   func_name(f), i + 1);
      return -1;
    }
    RVMObjectRetain(&arr->header);
    v->v_handle = arr;
    *code = kRVMNDArrayHandle;
    return 0;
  }
  if (tp == &PackedFuncType) {
    RVMObject* h = rvm_packed_func_handle((PackedFuncObject*)obj);
    if (h == NULL) return -1;
    RVMObjectRetain(h);
    v->v_handle = h;
    *code = kRVMPackedFuncHandle;
    return 0;
  }
  if (rvm_hooks.datatype_type != NULL && PyObject_TypeCheck(obj, rvm_hooks.datatype_type)) {
    long long c, b, l;
    if (attr_int(obj, "type_code", &c) || attr_int(obj, "bits", &b) || attr_int(obj, "lanes", &l))
      return -1;
    v->v_type.code = (uint8_t)c;
    v->v_type.bits = (uint8_t)b;
    v->v_type.lanes = (uint16_t)l;
    *code = kRVMDataType;
    return 0;
  }
  if (rvm_hooks.device_type != NULL && PyObject_TypeCheck(obj, rvm_hooks.device_type)) {
    long long t, d;
    if (attr_int(obj, "device_type", &t) || attr_int(obj, "device_id", &d)) return -1;
    v->v_device.device_type = (int32_t)t;
    v->v_device.device_id = (int32_t)d;
    *code = kRVMDevice;
    return 0;
  }
  if (rvm_hooks.shape_tuple_type != NULL && PyObject_TypeCheck(obj, rvm_hooks.shape_tuple_type)) {
    RVMShape* shape;
    if (shape_from_tuple(obj, &shape, f, i) != 0) return -1;
    v->v_handle = shape;
    *code = kRVMShapeHandle;
    return 0;
  }
  if (PyTuple_Check(obj) || PyList_Check(obj)) {
    RVMArray* arr;
    if (array_from_sequence(obj, &arr, f, i, depth) != 0) return -1;
    v->v_handle = arr;
    *code = kRVMArrayHandle;
    return 0;
  }
  if (PyBytes_Check(obj) || PyByteArray_Check(obj)) {
    RVMByteArray* b = &slots->bytes[i];
    if (PyBytes_Check(obj)) {
      b->data = PyBytes_AS_STRING(obj);
      b->size = (size_t)PyBytes_GET_SIZE(obj);
    } else {
      b->data = PyByteArray_AS_STRING(obj);
      b->size = (size_t)PyByteArray_GET_SIZE(obj);
    }
    v->v_handle = b;
    *code = kRVMBytes;
    return 0;
  }
  if (PyLong_Check(obj) || PyFloat_Check(obj) || PyUnicode_Check(obj)) {
    /* Subclasses of the scalar types (IntEnum, ...) travel as their base value. */
    if (PyFloat_Check(obj)) {
      *code = kRVMFloat;
      v->v_float64 = PyFloat_AsDouble(obj);
      return 0;
    }
    if (PyLong_Check(obj)) {
      *code = kRVMInt;
      return to_int64(obj, &v->v_int64, f, i);
    }
    v->v_str = PyUnicode_AsUTF8(obj);
    if (v->v_str == NULL) return -1;
    *code = kRVMStr;
    return 0;
  }
  if (PyObject_TypeCheck(obj, &ObjectBaseType)) {
    RVMObject* h = ((ObjectObject*)obj)->obj;
    RVMObjectRetain(h);
    v->v_handle = h;
    *code = kRVMObjectHandle;
    return 0;
  }
  PyObject* repl = call_fallback(obj, f, i, 1);
  if (repl == NULL) return -1;
  if (repl == obj) {
    Py_DECREF(repl);
    RVMObject* box = rvm_py_box(obj);
    if (box == NULL) return -1;
    v->v_handle = box;
    *code = kRVMObjectHandle;
    return 0;
  }
  int rc = rvm_py_to_value(repl, slots, i, f, depth + 1);
  if (rc != 0) {
    Py_DECREF(repl);
    return -1;
  }
  /* The replacement must outlive the call: str/bytes values point into it. */
  slots->keep[i] = repl;
  return 0;
}

void rvm_release_slots(ArgSlots* slots, int n) {
  for (int i = 0; i < n; ++i) {
    RVMValueRelease(slots->values[i], slots->codes[i]);
    Py_XDECREF(slots->keep[i]);
  }
}

/* ---- Python callee checks ---- */

static int is_plain_value(PyObject* obj) {
  PyTypeObject* tp = Py_TYPE(obj);
  return tp == &PyLong_Type || tp == &PyFloat_Type || obj == Py_None || tp == &PyBool_Type ||
         PyUnicode_Check(obj) || PyBytes_Check(obj) || PyByteArray_Check(obj) ||
         tp == &PackedFuncType || PyObject_TypeCheck(obj, &NDArrayBaseType) ||
         PyObject_TypeCheck(obj, &ObjectBaseType) ||
         (rvm_hooks.device_type != NULL && PyObject_TypeCheck(obj, rvm_hooks.device_type)) ||
         (PyLong_Check(obj) && !PyBool_Check(obj)) || PyFloat_Check(obj);
}

PyObject* rvm_py_check_arg(PyObject* obj, PackedFuncObject* f, int i, int depth) {
  if (depth > MAX_NESTING) {
    PyErr_Format(PyExc_TypeError, "packed function '%s': argument #%d is nested too deeply",
                 func_name(f), i + 1);
    return NULL;
  }
  if (Py_TYPE(obj) == &PyLong_Type) {
    int64_t unused;
    if (to_int64(obj, &unused, f, i) != 0) return NULL;
    Py_INCREF(obj);
    return obj;
  }
  if (is_plain_value(obj)) {
    Py_INCREF(obj);
    return obj;
  }
  if (PyTuple_Check(obj) || PyList_Check(obj)) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
    for (Py_ssize_t k = 0; k < n; ++k) {
      PyObject* item = PySequence_Fast_GET_ITEM(obj, k);
      PyObject* checked = rvm_py_check_arg(item, f, i, depth + 1);
      if (checked == NULL) return NULL;
      Py_DECREF(checked);
    }
    Py_INCREF(obj);
    return obj;
  }
  return call_fallback(obj, f, i, 0);
}

/* ---- packed value -> Python ---- */

static RVMObject borrowed_memory = {kRVMObjectStorage, 1 << 30, NULL};

static PyObject* wrap_object(RVMObject* obj, int steal) {
  if (obj->type_index == kRVMObjectPython) {
    PyObject* res = ((PyObjectBox*)obj)->obj;
    Py_INCREF(res);
    if (steal) RVMObjectFree(obj);
    return res;
  }
  ObjectObject* res = PyObject_New(ObjectObject, &ObjectBaseType);
  if (res == NULL) {
    if (steal) RVMObjectFree(obj);
    return NULL;
  }
  if (!steal) RVMObjectRetain(obj);
  res->obj = obj;
  return (PyObject*)res;
}

static PyObject* shape_to_py(RVMShape* shape) {
  PyObject* tup = PyTuple_New((Py_ssize_t)shape->ndim);
  if (tup == NULL) return NULL;
  for (int64_t k = 0; k < shape->ndim; ++k) {
    PyObject* d = PyLong_FromLongLong(shape->data[k]);
    if (d == NULL) {
      Py_DECREF(tup);
      return NULL;
    }
    PyTuple_SET_ITEM(tup, (Py_ssize_t)k, d);
  }
  if (rvm_hooks.shape_tuple_type == NULL) return tup;
  PyObject* res = PyObject_CallOneArg((PyObject*)rvm_hooks.shape_tuple_type, tup);
  Py_DECREF(tup);
  return res;
}

static PyObject* array_to_py(RVMArray* arr) {
  PyObject* tup = PyTuple_New((Py_ssize_t)arr->size);
  if (tup == NULL) return NULL;
  for (int64_t k = 0; k < arr->size; ++k) {
    PyObject* item = rvm_value_to_py(arr->values[k], arr->type_codes[k], 0);
    if (item == NULL) {
      Py_DECREF(tup);
      return NULL;
    }
    PyTuple_SET_ITEM(tup, (Py_ssize_t)k, item);
  }
  if (rvm_hooks.make_array == NULL) return tup;
  PyObject* res = PyObject_CallOneArg(rvm_hooks.make_array, tup);
  Py_DECREF(tup);
  return res;
}

PyObject* rvm_value_to_py(RVMValue v, int code, int steal) {
  switch (code) {
    case kRVMNull:
      Py_RETURN_NONE;
    case kRVMInt:
      return PyLong_FromLongLong(v.v_int64);
    case kRVMFloat:
      return PyFloat_FromDouble(v.v_float64);
    case kRVMBool:
      return PyBool_FromLong((long)v.v_int64);
    case kRVMStr:
      return PyUnicode_FromString(v.v_str != NULL ? v.v_str : "");
    case kRVMBytes: {
      const RVMByteArray* b = (const RVMByteArray*)v.v_handle;
      return PyBytes_FromStringAndSize(b->data, (Py_ssize_t)b->size);
    }
    case kRVMOpaqueHandle:
      return PyLong_FromVoidPtr(v.v_handle);
    case kRVMDataType:
      return PyObject_CallFunction(rvm_hooks.make_dtype, "iii", v.v_type.code, v.v_type.bits,
                                   v.v_type.lanes);
    case kRVMDevice:
      return PyObject_CallFunction(rvm_hooks.make_device, "ii", v.v_device.device_type,
                                   v.v_device.device_id);
    case kRVMDLTensorHandle: {
      /* A borrowed tensor from C: viewed, never owned, valid during the call. */
      const DLTensor* t = (const DLTensor*)v.v_handle;
      RVMNDArray* arr;
      if (RVMNDArrayCreateView(&borrowed_memory, (char*)t->data + t->byte_offset, t->shape,
                               t->ndim, t->dtype, t->device, &arr) != 0)
        return rvm_raise_last_error();
      return rvm_ndarray_wrap(arr, 1);
    }
    case kRVMNDArrayHandle:
      return rvm_ndarray_wrap((RVMNDArray*)v.v_handle, steal);
    case kRVMPackedFuncHandle:
      return rvm_packed_func_from_handle((RVMObject*)v.v_handle, steal);
    case kRVMShapeHandle: {
      PyObject* res = shape_to_py((RVMShape*)v.v_handle);
      if (steal) RVMObjectFree((RVMObject*)v.v_handle);
      return res;
    }
    case kRVMArrayHandle: {
      PyObject* res = array_to_py((RVMArray*)v.v_handle);
      if (steal) RVMObjectFree((RVMObject*)v.v_handle);
      return res;
    }
    case kRVMObjectHandle:
      return wrap_object((RVMObject*)v.v_handle, steal);
    default:
      return PyErr_Format(PyExc_TypeError, "unknown packed value type code %d", code);
  }
}
