/*
 * The CPython side of the runtime: the PackedFunc, NDArray and Object types,
 * and conversions between Python objects and packed values. Compiled into the
 * same shared object as the C runtime, so Python and C see one registry.
 */
#ifndef RVM_PY_BRIDGE_H_
#define RVM_PY_BRIDGE_H_

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "runtime_internal.h"

typedef struct {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  RVMObject* handle; /* the C function; created on demand for Python callables */
  PyObject* pyfunc;  /* the Python callable behind it, or NULL for C functions */
  PyObject* name;    /* registry name or NULL */
} PackedFuncObject;

typedef struct {
  PyObject_HEAD
  RVMNDArray* arr;
} NDArrayObject;

typedef struct {
  PyObject_HEAD
  RVMObject* obj;
} ObjectObject;

/* Python classes and hooks installed by rvm.runtime at import (see _set_hooks). */
typedef struct {
  PyTypeObject* ndarray_type;     /* rvm NDArray (a subclass of NDArrayBase) */
  PyTypeObject* shape_tuple_type; /* ShapeTuple (a tuple subclass) */
  PyTypeObject* datatype_type;    /* DataType (a str subclass) */
  PyTypeObject* device_type;      /* Device */
  PyObject* make_array;           /* items tuple -> Array */
  PyObject* make_dtype;           /* (code, bits, lanes) -> DataType */
  PyObject* make_device;          /* (device_type, device_id) -> Device */
  PyObject* fallback;             /* (obj, for_c) -> replacement, obj (opaque), or NotImplemented */
  PyObject* error_type;           /* raised for C errors without a Python type prefix */
} BridgeHooks;

extern BridgeHooks rvm_hooks;
extern PyTypeObject PackedFuncType;
extern PyTypeObject NDArrayBaseType;
extern PyTypeObject ObjectBaseType;

/* Scratch space for converting one argument vector. */
typedef struct {
  RVMValue* values;
  int* codes;
  RVMByteArray* bytes; /* storage for bytes arguments, one slot per value */
  PyObject** keep;     /* replacement objects from the fallback, one slot per value */
} ArgSlots;

/* Python -> packed value. Object codes yield a new reference; str/bytes point
 * into Python objects that must outlive the use. Sets a Python error on failure. */
int rvm_py_to_value(PyObject* obj, ArgSlots* slots, int i, PackedFuncObject* f, int depth);
/* Releases what rvm_py_to_value produced for slots [0, n). */
void rvm_release_slots(ArgSlots* slots, int n);
/* Packed value -> Python. steal: the value's reference passes to the result. */
PyObject* rvm_value_to_py(RVMValue v, int code, int steal);
/* Checks that obj may be passed to a packed function (Python callee); returns a
 * new reference to what should be passed instead, or NULL with an error set. */
PyObject* rvm_py_check_arg(PyObject* obj, PackedFuncObject* f, int i, int depth);

/* Raises the current packed-call error as a Python exception; returns NULL. */
PyObject* rvm_raise_last_error(void);
/* Records the pending Python exception as the packed-call error; returns -1. */
int rvm_set_error_from_python(void);

PyObject* rvm_packed_func_from_handle(RVMObject* handle, int steal);
PyObject* rvm_packed_func_from_callable(PyObject* callable, PyObject* name);
/* The C handle of a PackedFunc, created on first use for a Python callable. */
RVMObject* rvm_packed_func_handle(PackedFuncObject* f);
PyObject* rvm_ndarray_wrap(RVMNDArray* arr, int steal);

/* A Python object carried through C unchanged (kRVMObjectPython), and back. */
RVMObject* rvm_py_box(PyObject* obj);
PyObject* rvm_py_box_object(RVMObject* box); /* borrowed */
static inline int rvm_is_py_box(RVMValue v, int code) {
  return code == kRVMObjectHandle && v.v_handle != NULL &&
         ((RVMObject*)v.v_handle)->type_index == kRVMObjectPython;
}
/* The Python type name a value has (or converts to), for error messages. */
const char* rvm_value_type_name(RVMValue v, int code);

int rvm_py_trampoline(RVMValue* args, int* codes, int n, RVMValue* ret, int* ret_code,
                      void* resource);

#endif /* RVM_PY_BRIDGE_H_ */
