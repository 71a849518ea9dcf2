/* NDArrayBase: the C part of rvm's NDArray (buffer protocol, DLPack), and
 * ObjectBase for other runtime objects. */
#include "py_bridge.h"

/* The one Python object of a tensor: a tensor that crosses to Python again (a register
 * passed to a Python callee, a result returned) comes back as the object it already has. */
PyObject* rvm_ndarray_wrap(RVMNDArray* arr, int steal) {
  PyTypeObject* type = rvm_hooks.ndarray_type != NULL ? rvm_hooks.ndarray_type : &NDArrayBaseType;
  PyObject* known = (PyObject*)arr->py_object;
  if (known != NULL && Py_TYPE(known) == type) {
    Py_INCREF(known);
    if (steal) RVMObjectFree(&arr->header);
    return known;
  }
  NDArrayObject* self = (NDArrayObject*)type->tp_alloc(type, 0);
  if (self == NULL) {
    if (steal) RVMObjectFree(&arr->header);
    return NULL;
  }
  if (!steal) RVMObjectRetain(&arr->header);
  self->arr = arr;
  if (known == NULL) arr->py_object = self;
  return (PyObject*)self;
}

static void ndarray_dealloc(NDArrayObject* self) {
  if (self->arr != NULL) {
    if (self->arr->py_object == (void*)self) self->arr->py_object = NULL;
    RVMObjectFree(&self->arr->header);
  }
  Py_TYPE(self)->tp_free((PyObject*)self);
}

static int check_arr(NDArrayObject* self) {
  if (self->arr == NULL) {
    PyErr_SetString(PyExc_ValueError, "this NDArray holds no tensor");
    return -1;
  }
  return 0;
}

static const char* buffer_format(DLDataType t) {
  if (t.lanes != 1) return NULL;
  switch (t.code) {
    case kDLInt:
      /* int4, int2: one element a byte */
      return (t.bits == 8 || t.bits == 4 || t.bits == 2) ? "b" : t.bits == 16 ? "h" : t.bits == 32 ? "i" : t.bits == 64 ? "q" : NULL;
    case kDLUInt:
      return (t.bits == 8 || t.bits == 4 || t.bits == 2) ? "B" : t.bits == 16 ? "H" : t.bits == 32 ? "I" : t.bits == 64 ? "Q" : NULL;
    case kDLFloat:
      return t.bits == 16 ? "e" : t.bits == 32 ? "f" : t.bits == 64 ? "d" : NULL;
    case kDLBool:
      return t.bits == 8 ? "?" : NULL;
    case kDLOpaqueHandle:
    case kDLComplex:
      return NULL;
    default: /* bfloat16, float8, float4: raw bytes, viewed with ml_dtypes' dtype in Python */
      return t.bits == 16 ? "H" : (t.bits == 8 || t.bits == 4) ? "B" : NULL;
  }
}

static int ndarray_getbuffer(NDArrayObject* self, Py_buffer* view, int flags) {
  if (check_arr(self) != 0) return -1;
  DLTensor* t = &self->arr->dl;
  const char* fmt = buffer_format(t->dtype);
  if (fmt == NULL) {
    PyErr_Format(PyExc_BufferError, "no buffer format for dtype code %d bits %d lanes %d",
                 t->dtype.code, t->dtype.bits, t->dtype.lanes);
    return -1;
  }
  if (RVMDataSize(t->shape, t->ndim, t->dtype) < 0) { /* never made by rvm: refuse, not wrap */
    PyErr_Format(PyExc_BufferError, "a tensor of %d dimensions whose byte size overflows "
                 "int64 cannot be exported", t->ndim);
    return -1;
  }
  Py_ssize_t itemsize = (t->dtype.bits + 7) / 8;
  Py_ssize_t* shape_strides = (Py_ssize_t*)PyMem_Malloc(sizeof(Py_ssize_t) * 2 * (size_t)(t->ndim + 1));
  if (shape_strides == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  Py_ssize_t stride = itemsize;
  Py_ssize_t count = 1;
  for (int i = t->ndim - 1; i >= 0; --i) {
    shape_strides[i] = (Py_ssize_t)t->shape[i];
    shape_strides[t->ndim + i] = stride;
    stride *= (Py_ssize_t)t->shape[i];
    count *= (Py_ssize_t)t->shape[i];
  }
  view->buf = (char*)t->data + t->byte_offset;
  view->obj = (PyObject*)self;
  Py_INCREF(self);
  view->len = count * itemsize;
  view->readonly = 0;
  view->itemsize = itemsize;
  view->format = (flags & PyBUF_FORMAT) ? (char*)fmt : NULL;
  view->ndim = t->ndim;
  view->shape = shape_strides;
  view->strides = shape_strides + t->ndim;
  view->suboffsets = NULL;
  view->internal = shape_strides;
  return 0;
}

static void ndarray_releasebuffer(NDArrayObject* self, Py_buffer* view) {
  PyMem_Free(view->internal);
}

static PyBufferProcs ndarray_as_buffer = {
    (getbufferproc)ndarray_getbuffer,
    (releasebufferproc)ndarray_releasebuffer,
};

static void dlpack_capsule_destructor(PyObject* capsule) {
  /* Consumers rename the capsule to "used_dltensor"; only an unconsumed one is ours to free. */
  if (PyCapsule_IsValid(capsule, "dltensor")) {
    DLManagedTensor* managed = (DLManagedTensor*)PyCapsule_GetPointer(capsule, "dltensor");
    if (managed != NULL && managed->deleter != NULL) managed->deleter(managed);
  }
  PyErr_Clear();
}

static void dlpack_versioned_capsule_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
    DLManagedTensorVersioned* managed =
        (DLManagedTensorVersioned*)PyCapsule_GetPointer(capsule, "dltensor_versioned");
    if (managed != NULL && managed->deleter != NULL) managed->deleter(managed);
  }
  PyErr_Clear();
}

/* Whether the consumer asked for DLPack >= 1.0 (max_version=(major, minor)). */
static int wants_versioned(PyObject* max_version) {
  if (max_version == Py_None || !PyTuple_Check(max_version) || PyTuple_GET_SIZE(max_version) < 1)
    return 0;
  long major = PyLong_AsLong(PyTuple_GET_ITEM(max_version, 0));
  if (major == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    return 0;
  }
  return major >= 1;
}

static PyObject* ndarray_dlpack(NDArrayObject* self, PyObject* args, PyObject* kwargs) {
  static char* kwlist[] = {"stream", "max_version", "dl_device", "copy", NULL};
  PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None, *copy = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O$OOO:__dlpack__", kwlist, &stream,
                                   &max_version, &dl_device, &copy))
    return NULL;
  if (check_arr(self) != 0) return NULL;
  if (copy == Py_True) {
    PyErr_SetString(PyExc_BufferError, "NDArray.__dlpack__ shares memory; copy=True is not supported");
    return NULL;
  }
  if (wants_versioned(max_version)) {
    DLManagedTensorVersioned* managed;
    if (RVMNDArrayToDLPackVersioned(self->arr, &managed) != 0) return rvm_raise_last_error();
    PyObject* capsule =
        PyCapsule_New(managed, "dltensor_versioned", dlpack_versioned_capsule_destructor);
    if (capsule == NULL) managed->deleter(managed);
    return capsule;
  }
  DLManagedTensor* managed;
  if (RVMNDArrayToDLPack(self->arr, &managed) != 0) return rvm_raise_last_error();
  PyObject* capsule = PyCapsule_New(managed, "dltensor", dlpack_capsule_destructor);
  if (capsule == NULL) managed->deleter(managed);
  return capsule;
}

static PyObject* ndarray_get_shape(NDArrayObject* self, void* closure) {
  if (check_arr(self) != 0) return NULL;
  DLTensor* t = &self->arr->dl;
  PyObject* tup = PyTuple_New(t->ndim);
  if (tup == NULL) return NULL;
  for (int i = 0; i < t->ndim; ++i) {
    PyObject* d = PyLong_FromLongLong(t->shape[i]);
    if (d == NULL) {
      Py_DECREF(tup);
      return NULL;
    }
    PyTuple_SET_ITEM(tup, i, d);
  }
  return tup;
}

static PyObject* ndarray_get_ndim(NDArrayObject* self, void* closure) {
  if (check_arr(self) != 0) return NULL;
  return PyLong_FromLong(self->arr->dl.ndim);
}

static PyObject* ndarray_get_dtype_tuple(NDArrayObject* self, void* closure) {
  if (check_arr(self) != 0) return NULL;
  DLDataType t = self->arr->dl.dtype;
  return Py_BuildValue("(iii)", t.code, t.bits, t.lanes);
}

static PyObject* ndarray_get_device_tuple(NDArrayObject* self, void* closure) {
  if (check_arr(self) != 0) return NULL;
  DLDevice d = self->arr->dl.device;
  return Py_BuildValue("(ii)", d.device_type, d.device_id);
}

static PyObject* ndarray_get_data_ptr(NDArrayObject* self, void* closure) {
  if (check_arr(self) != 0) return NULL;
  return PyLong_FromVoidPtr((char*)self->arr->dl.data + self->arr->dl.byte_offset);
}

static PyObject* ndarray_get_handle(NDArrayObject* self, void* closure) {
  if (check_arr(self) != 0) return NULL;
  return PyLong_FromVoidPtr(self->arr);
}

static PyObject* ndarray_get_owns_memory(NDArrayObject* self, void* closure) {
  if (check_arr(self) != 0) return NULL;
  return PyBool_FromLong(self->arr->owner == NULL);
}

static PyObject* ndarray_get_use_count(NDArrayObject* self, void* closure) {
  if (check_arr(self) != 0) return NULL;
  return PyLong_FromLong(__atomic_load_n(&self->arr->header.ref_count, __ATOMIC_RELAXED));
}

static PyGetSetDef ndarray_getset[] = {
    {"_shape", (getter)ndarray_get_shape, NULL, "shape as a tuple of ints", NULL},
    {"ndim", (getter)ndarray_get_ndim, NULL, "number of dimensions", NULL},
    {"_dtype_tuple", (getter)ndarray_get_dtype_tuple, NULL, "(code, bits, lanes)", NULL},
    {"_device_tuple", (getter)ndarray_get_device_tuple, NULL, "(device_type, device_id)", NULL},
    {"data_ptr", (getter)ndarray_get_data_ptr, NULL, "address of the first element", NULL},
    {"handle", (getter)ndarray_get_handle, NULL, "address of the RVMNDArray (a DLTensor view)", NULL},
    {"_owns_memory", (getter)ndarray_get_owns_memory, NULL, "memory allocated by rvm itself", NULL},
    {"_use_count", (getter)ndarray_get_use_count, NULL,
     "references to the tensor: this object, views of it, exported DLPack tensors", NULL},
    {NULL},
};

static PyMethodDef ndarray_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))ndarray_dlpack, METH_VARARGS | METH_KEYWORDS,
     "Exports the tensor as a DLPack capsule sharing its memory."},
    {NULL},
};

PyTypeObject NDArrayBaseType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "rvm.runtime.NDArrayBase",
    .tp_doc = "The native part of NDArray: a reference to a runtime tensor.",
    .tp_basicsize = sizeof(NDArrayObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_new = PyType_GenericNew,
    .tp_dealloc = (destructor)ndarray_dealloc,
    .tp_as_buffer = &ndarray_as_buffer,
    .tp_getset = ndarray_getset,
    .tp_methods = ndarray_methods,
};

/* ---- ObjectBase ---- */

static void object_dealloc(ObjectObject* self) {
  if (self->obj != NULL) RVMObjectFree(self->obj);
  Py_TYPE(self)->tp_free((PyObject*)self);
}

static PyObject* object_get_type_index(ObjectObject* self, void* closure) {
  return PyLong_FromUnsignedLong(self->obj != NULL ? self->obj->type_index : 0);
}

static PyObject* object_get_handle(ObjectObject* self, void* closure) {
  return PyLong_FromVoidPtr(self->obj);
}

static PyObject* object_repr(ObjectObject* self) {
  return PyUnicode_FromFormat("<rvm.runtime.Object type_index=%u at %p>",
                              self->obj != NULL ? self->obj->type_index : 0, self->obj);
}

static PyGetSetDef object_getset[] = {
    {"type_index", (getter)object_get_type_index, NULL, "the runtime type index", NULL},
    {"handle", (getter)object_get_handle, NULL, "address of the runtime object", NULL},
    {NULL},
};

PyTypeObject ObjectBaseType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "rvm.runtime.Object",
    .tp_doc = "A runtime object that has no Python class of its own.",
    .tp_basicsize = sizeof(ObjectObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)object_dealloc,
    .tp_repr = (reprfunc)object_repr,
    .tp_getset = object_getset,
};
