/* The PackedFunc type, Python callbacks called from C, and error crossing. */
#include "py_bridge.h"

#define STACK_ARGS 8

BridgeHooks rvm_hooks;

/* ---- errors ---- */

/* The Python exception behind the current packed-call error, if it began in
 * Python; re-raised as itself when the error comes back to Python. */
static __thread PyObject* stashed_type = NULL;
static __thread PyObject* stashed_value = NULL;
static __thread PyObject* stashed_tb = NULL;
static __thread uint64_t stashed_generation = 0;

static void clear_stash(void) {
  Py_CLEAR(stashed_type);
  Py_CLEAR(stashed_value);
  Py_CLEAR(stashed_tb);
}

int rvm_set_error_from_python(void) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  if (tb != NULL && value != NULL) PyException_SetTraceback(value, tb);
  const char* type_name = type != NULL ? ((PyTypeObject*)type)->tp_name : "Error";
  const char* dot = strrchr(type_name, '.');
  if (dot != NULL) type_name = dot + 1;
  PyObject* text = value != NULL ? PyObject_Str(value) : NULL;
  const char* msg = text != NULL ? PyUnicode_AsUTF8(text) : NULL;
  if (msg == NULL) {
    PyErr_Clear();
    msg = "<unprintable exception>";
  }
  rvm_set_error("%s: %s", type_name, msg);
  Py_XDECREF(text);
  clear_stash();
  stashed_type = type;
  stashed_value = value;
  stashed_tb = tb;
  stashed_generation = rvm_error_generation();
  return -1;
}

/* "ValueError: msg" -> (ValueError, "msg") for builtin exception names. */
static PyObject* exception_type_for(const char* msg, const char** rest) {
  *rest = msg;
  const char* colon = strstr(msg, ": ");
  if (colon == NULL || colon - msg > 40) return rvm_hooks.error_type;
  char name[48];
  size_t len = (size_t)(colon - msg);
  memcpy(name, msg, len);
  name[len] = '\0';
  for (size_t k = 0; k < len; ++k) {
    char c = name[k];
    int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return rvm_hooks.error_type;
  }
  PyObject* builtins = PyEval_GetBuiltins();
  PyObject* type = builtins != NULL ? PyDict_GetItemString(builtins, name) : NULL;
  if (type == NULL || !PyType_Check(type) ||
      !PyType_IsSubtype((PyTypeObject*)type, (PyTypeObject*)PyExc_Exception))
    return rvm_hooks.error_type;
  *rest = colon + 2;
  return type;
}

PyObject* rvm_raise_last_error(void) {
  if (stashed_value != NULL && stashed_generation == rvm_error_generation()) {
    PyErr_Restore(stashed_type, stashed_value, stashed_tb);
    stashed_type = stashed_value = stashed_tb = NULL;
    return NULL;
  }
  clear_stash();
  const char* rest;
  const char* interrupt = "KeyboardInterrupt: ";
  if (strncmp(RVMGetLastError(), interrupt, strlen(interrupt)) == 0) {
    /* a kernel stopped by SIGINT: Python's handler of it decides what is raised */
    if (PyErr_CheckSignals() == 0)
      PyErr_SetString(PyExc_KeyboardInterrupt, RVMGetLastError() + strlen(interrupt));
    return NULL;
  }
  PyObject* type = exception_type_for(RVMGetLastError(), &rest);
  if (type == NULL) type = PyExc_RuntimeError;
  PyErr_SetString(type, rest);
  return NULL;
}

/* ---- Python callables seen from C ---- */

static __thread char* ret_str = NULL;
static __thread RVMByteArray ret_bytes;

static void release_pyfunc(void* resource) {
  PyGILState_STATE st = PyGILState_Ensure();
  Py_DECREF((PyObject*)resource);
  PyGILState_Release(st);
}

/* Keeps a returned str/bytes alive until this thread's next call. */
static int hold_return_text(RVMValue* ret, int code) {
  const char* src;
  size_t size;
  if (code == kRVMStr) {
    src = ret->v_str;
    size = strlen(src);
  } else {
    const RVMByteArray* b = (const RVMByteArray*)ret->v_handle;
    src = b->data;
    size = b->size;
  }
  char* copy = (char*)malloc(size + 1);
  if (copy == NULL) {
    rvm_set_error("MemoryError: cannot hold a returned string of %zu bytes", size);
    return -1;
  }
  memcpy(copy, src, size);
  copy[size] = '\0';
  free(ret_str);
  ret_str = copy;
  if (code == kRVMStr) {
    ret->v_str = copy;
  } else {
    ret_bytes.data = copy;
    ret_bytes.size = size;
    ret->v_handle = &ret_bytes;
  }
  return 0;
}

int rvm_py_trampoline(RVMValue* args, int* codes, int n, RVMValue* ret, int* ret_code,
                      void* resource) {
  PyGILState_STATE st = PyGILState_Ensure();
  PyObject* stack[STACK_ARGS];
  PyObject** argv = n <= STACK_ARGS ? stack : (PyObject**)PyMem_Malloc(sizeof(PyObject*) * (size_t)n);
  int rc = -1;
  int built = 0;
  if (argv == NULL) {
    PyErr_NoMemory();
    rvm_set_error_from_python();
    goto done;
  }
  for (; built < n; ++built) {
    argv[built] = rvm_value_to_py(args[built], codes[built], 0);
    if (argv[built] == NULL) {
      rvm_set_error_from_python();
      goto done;
    }
  }
  PyObject* res = PyObject_Vectorcall((PyObject*)resource, argv, (size_t)n, NULL);
  if (res == NULL) {
    rvm_set_error_from_python();
    goto done;
  }
  RVMValue value;
  int code;
  RVMByteArray bytes;
  PyObject* keep = NULL;
  ArgSlots slots = {&value, &code, &bytes, &keep};
  if (rvm_py_to_value(res, &slots, 0, NULL, 0) != 0) {
    Py_DECREF(res);
    rvm_set_error_from_python();
    goto done;
  }
  rc = 0;
  if (code == kRVMStr || code == kRVMBytes) rc = hold_return_text(&value, code);
  Py_XDECREF(keep);
  Py_DECREF(res);
  *ret = value;
  *ret_code = code;
done:
  for (int k = 0; k < built; ++k) Py_DECREF(argv[k]);
  if (argv != NULL && argv != stack) PyMem_Free(argv);
  PyGILState_Release(st);
  return rc;
}

/* ---- the PackedFunc type ---- */

static PyObject* call_python(PackedFuncObject* f, PyObject* const* args, Py_ssize_t n) {
  PyObject* stack[STACK_ARGS];
  PyObject** checked = n <= STACK_ARGS ? stack : (PyObject**)PyMem_Malloc(sizeof(PyObject*) * (size_t)n);
  if (checked == NULL) return PyErr_NoMemory();
  Py_ssize_t done = 0;
  PyObject* res = NULL;
  for (; done < n; ++done) {
    checked[done] = rvm_py_check_arg(args[done], f, (int)done, 0);
    if (checked[done] == NULL) goto out;
  }
  res = PyObject_Vectorcall(f->pyfunc, checked, (size_t)n, NULL);
out:
  for (Py_ssize_t k = 0; k < done; ++k) Py_DECREF(checked[k]);
  if (checked != stack) PyMem_Free(checked);
  return res;
}

static PyObject* packed_vectorcall(PyObject* self, PyObject* const* args, size_t nargsf,
                                   PyObject* kwnames) {
  PackedFuncObject* f = (PackedFuncObject*)self;
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
    return PyErr_Format(PyExc_TypeError, "packed function '%U' takes positional arguments only",
                        f->name != NULL ? f->name : Py_None);
  }
  if (f->pyfunc != NULL) return call_python(f, args, n);

  RVMValue values_stack[STACK_ARGS];
  int codes_stack[STACK_ARGS];
  RVMByteArray bytes_stack[STACK_ARGS];
  PyObject* keep_stack[STACK_ARGS];
  ArgSlots slots = {values_stack, codes_stack, bytes_stack, keep_stack};
  char* heap = NULL;
  if (n > STACK_ARGS) {
    size_t each = sizeof(RVMValue) + sizeof(int) + sizeof(RVMByteArray) + sizeof(PyObject*);
    heap = (char*)PyMem_Malloc(each * (size_t)n);
    if (heap == NULL) return PyErr_NoMemory();
    slots.values = (RVMValue*)heap;
    slots.bytes = (RVMByteArray*)(slots.values + n);
    slots.keep = (PyObject**)(slots.bytes + n);
    slots.codes = (int*)(slots.keep + n);
  }
  int done = 0;
  PyObject* result = NULL;
  for (; done < n; ++done) {
    if (rvm_py_to_value(args[done], &slots, done, f, 0) != 0) goto out;
  }
  RVMFunctionObj* fn = (RVMFunctionObj*)f->handle;
  RVMValue ret;
  int ret_code = kRVMNull;
  ret.v_int64 = 0;
  /* A compiled kernel runs without the GIL, so threads calling kernels run in parallel;
   * a Python object among its arguments (a box) keeps the GIL, as in the VM. */
  int release = fn->releases_gil;
  for (int k = 0; release && k < (int)n; ++k)
    release = !rvm_is_py_box(slots.values[k], slots.codes[k]);
  PyThreadState* released = release ? PyEval_SaveThread() : NULL;
  int rc = fn->func(slots.values, slots.codes, (int)n, &ret, &ret_code, fn->resource);
  if (released != NULL) PyEval_RestoreThread(released);
  if (rc != 0) {
    rvm_raise_last_error();
    goto out;
  }
  result = rvm_value_to_py(ret, ret_code, 1);
out:
  rvm_release_slots(&slots, done);
  PyMem_Free(heap);
  return result;
}

static PackedFuncObject* new_packed_func(void) {
  PackedFuncObject* f = PyObject_GC_New(PackedFuncObject, &PackedFuncType);
  if (f == NULL) return NULL;
  f->vectorcall = packed_vectorcall;
  f->handle = NULL;
  f->pyfunc = NULL;
  f->name = NULL;
  PyObject_GC_Track((PyObject*)f);
  return f;
}

PyObject* rvm_packed_func_from_handle(RVMObject* handle, int steal) {
  RVMFunctionObj* fn = (RVMFunctionObj*)handle;
  PackedFuncObject* f = new_packed_func();
  if (f == NULL) {
    if (steal) RVMObjectFree(handle);
    return NULL;
  }
  if (!steal) RVMObjectRetain(handle);
  f->handle = handle;
  if (fn->func == rvm_py_trampoline) {
    /* A Python callable that went through C: call it directly again. */
    f->pyfunc = (PyObject*)fn->resource;
    Py_INCREF(f->pyfunc);
  }
  return (PyObject*)f;
}

PyObject* rvm_packed_func_from_callable(PyObject* callable, PyObject* name) {
  if (Py_TYPE(callable) == &PackedFuncType && name == NULL) {
    Py_INCREF(callable);
    return callable;
  }
  if (!PyCallable_Check(callable)) {
    return PyErr_Format(PyExc_TypeError, "a packed function needs a callable, got '%s'",
                        Py_TYPE(callable)->tp_name);
  }
  if (Py_TYPE(callable) == &PackedFuncType) {
    PackedFuncObject* src = (PackedFuncObject*)callable;
    PackedFuncObject* f = new_packed_func();
    if (f == NULL) return NULL;
    f->handle = src->handle;
    if (f->handle != NULL) RVMObjectRetain(f->handle);
    f->pyfunc = src->pyfunc;
    Py_XINCREF(f->pyfunc);
    f->name = name;
    Py_XINCREF(name);
    return (PyObject*)f;
  }
  PackedFuncObject* f = new_packed_func();
  if (f == NULL) return NULL;
  Py_INCREF(callable);
  f->pyfunc = callable;
  f->name = name;
  Py_XINCREF(name);
  return (PyObject*)f;
}

RVMObject* rvm_packed_func_handle(PackedFuncObject* f) {
  if (f->handle != NULL) return f->handle;
  RVMObject* h;
  if (RVMFuncCreateFromCFunc(rvm_py_trampoline, f->pyfunc, release_pyfunc, &h) != 0) {
    rvm_raise_last_error();
    return NULL;
  }
  Py_INCREF(f->pyfunc); /* owned by the C function now */
  f->handle = h;
  return h;
}

static PyObject* packed_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static char* kwlist[] = {"func", "name", NULL};
  PyObject* func;
  PyObject* name = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:PackedFunc", kwlist, &func, &name))
    return NULL;
  if (name == Py_None) name = NULL;
  if (name != NULL && !PyUnicode_Check(name)) {
    return PyErr_Format(PyExc_TypeError, "PackedFunc name must be a str, got '%s'",
                        Py_TYPE(name)->tp_name);
  }
  return rvm_packed_func_from_callable(func, name);
}

static int packed_traverse(PackedFuncObject* f, visitproc visit, void* arg) {
  Py_VISIT(f->pyfunc);
  Py_VISIT(f->name);
  return 0;
}

static int packed_clear(PackedFuncObject* f) {
  Py_CLEAR(f->pyfunc);
  Py_CLEAR(f->name);
  return 0;
}

static void packed_dealloc(PackedFuncObject* f) {
  PyObject_GC_UnTrack(f);
  packed_clear(f);
  if (f->handle != NULL) RVMObjectFree(f->handle);
  PyObject_GC_Del(f);
}

static PyObject* packed_repr(PackedFuncObject* f) {
  const char* kind = f->pyfunc != NULL ? "python" : "c";
  if (f->name != NULL) return PyUnicode_FromFormat("<PackedFunc %U (%s)>", f->name, kind);
  return PyUnicode_FromFormat("<PackedFunc (%s) at %p>", kind, f);
}

static PyObject* packed_get_name(PackedFuncObject* f, void* closure) {
  if (f->name == NULL) Py_RETURN_NONE;
  Py_INCREF(f->name);
  return f->name;
}

static PyObject* packed_get_is_python(PackedFuncObject* f, void* closure) {
  return PyBool_FromLong(f->pyfunc != NULL);
}

static PyObject* packed_get_python_func(PackedFuncObject* f, void* closure) {
  if (f->pyfunc == NULL) Py_RETURN_NONE;
  Py_INCREF(f->pyfunc);
  return f->pyfunc;
}

static PyObject* packed_get_handle(PackedFuncObject* f, void* closure) {
  RVMObject* h = rvm_packed_func_handle(f);
  if (h == NULL) return NULL;
  return PyLong_FromVoidPtr(h);
}

static PyGetSetDef packed_getset[] = {
    {"name", (getter)packed_get_name, NULL, "The registry name, or None.", NULL},
    {"is_python", (getter)packed_get_is_python, NULL, "Whether a Python callable implements it.",
     NULL},
    {"python_func", (getter)packed_get_python_func, NULL,
     "The Python callable behind it, or None for a C function.", NULL},
    {"handle", (getter)packed_get_handle, NULL, "Address of the C function object.", NULL},
    {NULL},
};

PyTypeObject PackedFuncType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "rvm.runtime.PackedFunc",
    .tp_doc = "A function of the packed calling convention: callable from Python and C alike.\n\n"
              "PackedFunc(callable, name=None) wraps a Python callable.",
    .tp_basicsize = sizeof(PackedFuncObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = packed_new,
    .tp_dealloc = (destructor)packed_dealloc,
    .tp_traverse = (traverseproc)packed_traverse,
    .tp_clear = (inquiry)packed_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(PackedFuncObject, vectorcall),
    .tp_repr = (reprfunc)packed_repr,
    .tp_getset = packed_getset,
};
