/* Native vm.builtin.* functions: memory, shape checks and matching, tuples,
 * conditions. Each handles the arguments codegen emits; anything else, and
 * every failed check, defers to the Python implementation (RVM_VM_DEFER),
 * which gives the error message users see from both engines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm_engine.h"

#define ARGS RVMVirtualMachine *vm, RVMValue *args, int *codes, int n, RVMValue *ret, int *ret_code
#define IS_INT(i) (codes[i] == kRVMInt)
#define IS_TENSOR(i) (codes[i] == kRVMNDArrayHandle)
#define IS_SHAPE(i) (codes[i] == kRVMShapeHandle)
#define TENSOR(i) (&((RVMNDArray*)args[i].v_handle)->dl)
#define SHAPE(i) ((RVMShape*)args[i].v_handle)

enum { kMatchEqualImm = 0, kMatchStore = 1, kMatchNoOp = 2, kMatchEqualHeap = 3 };
enum { kMakeImm = 0, kMakeLoad = 1 };

static int64_t itemsize(DLDataType t) { return ((int64_t)t.bits * t.lanes + 7) / 8; }

/* prod(dims) * size; 0 on overflow or a negative dimension. */
static int checked_bytes(const int64_t* dims, int64_t ndim, int64_t size, int64_t* out) {
  int64_t total = size;
  for (int64_t i = 0; i < ndim; ++i) {
    if (dims[i] < 0 || __builtin_mul_overflow(total, dims[i], &total)) return 0;
  }
  *out = total;
  return 1;
}

static const char* dtype_base(DLDataType t) {
  static const char* ints[] = {"int8", "int16", "int32", "int64"};
  static const char* uints[] = {"uint8", "uint16", "uint32", "uint64"};
  int k = t.bits == 8 ? 0 : t.bits == 16 ? 1 : t.bits == 32 ? 2 : t.bits == 64 ? 3 : -1;
  if (t.code == kDLBool || (t.code == kDLUInt && t.bits == 1)) return "bool";
  if (t.code == kDLInt && k >= 0) return ints[k];
  if (t.code == kDLUInt && k >= 0) return uints[k];
  if (t.code == kDLFloat && k >= 1) return k == 1 ? "float16" : k == 2 ? "float32" : "float64";
  if (t.code == kDLOpaqueHandle) return "handle";
  return "unknown";
}

static void format_dtype(char* buf, size_t size, DLDataType t) {
  if (t.lanes == 1) {
    snprintf(buf, size, "%s", dtype_base(t));
  } else {
    snprintf(buf, size, "%sx%d", dtype_base(t), (int)t.lanes);
  }
}

/* "[1, 2]" (a list) or "(1, 2)" / "(1,)" (a tuple), as Python prints them. */
static void format_dims(char* buf, size_t size, const int64_t* dims, int64_t ndim, int as_tuple) {
  size_t used = (size_t)snprintf(buf, size, "%c", as_tuple ? '(' : '[');
  for (int64_t i = 0; i < ndim && used < size; ++i) {
    used += (size_t)snprintf(buf + used, size - used, i ? ", %lld" : "%lld", (long long)dims[i]);
  }
  if (used < size) {
    snprintf(buf + used, size - used, "%s", as_tuple ? (ndim == 1 ? ",)" : ")") : "]");
  }
}

static int alloc_storage(ARGS) {
  if (n < 2 || n > 5 || codes[0] != kRVMOpaqueHandle || args[0].v_handle != vm) return RVM_VM_DEFER;
  int64_t nelem;
  if (IS_INT(1)) {
    nelem = args[1].v_int64;
  } else if (IS_SHAPE(1)) {
    if (!checked_bytes(SHAPE(1)->data, SHAPE(1)->ndim, 1, &nelem)) return RVM_VM_DEFER;
  } else {
    return RVM_VM_DEFER;
  }
  int64_t device = 0;
  if (n >= 3) {
    if (!IS_INT(2)) return RVM_VM_DEFER;
    device = args[2].v_int64;
  }
  int64_t size = 1;
  if (n >= 4) {
    if (codes[3] != kRVMDataType) return RVM_VM_DEFER;
    size = itemsize(args[3].v_type);
  }
  int64_t nbytes;
  if (nelem < 0 || device < 0 || device >= vm->num_devices ||
      __builtin_mul_overflow(nelem, size, &nbytes))
    return RVM_VM_DEFER;
  RVMVMStorage* s = rvm_vm_pool_alloc(&vm->pools[device], nbytes);
  if (s == NULL) return -1;
  ret->v_handle = s;
  *ret_code = kRVMObjectHandle;
  return 0;
}

static int alloc_tensor(ARGS) {
  if (n != 4 || !rvm_vm_is_storage(args[0], codes[0]) || !IS_SHAPE(2) ||
      codes[3] != kRVMDataType)
    return RVM_VM_DEFER;
  RVMVMStorage* s = (RVMVMStorage*)args[0].v_handle;
  RVMShape* shape = SHAPE(2);
  DLDataType dtype = args[3].v_type;
  char dims[256], name[32];
  if (!IS_INT(1)) {
    PyErr_SetString(PyExc_TypeError, "alloc_tensor: the offset must be an int");
    return -1;
  }
  int64_t offset = args[1].v_int64;
  for (int64_t i = 0; i < shape->ndim; ++i) {
    if (shape->data[i] < 0) {
      format_dims(dims, sizeof(dims), shape->data, shape->ndim, 1);
      PyErr_Format(PyExc_ValueError, "alloc_tensor: negative dimension in shape %s", dims);
      return -1;
    }
  }
  int64_t nbytes = -1;
  int fits = checked_bytes(shape->data, shape->ndim, itemsize(dtype), &nbytes) && offset >= 0 &&
             offset <= s->nbytes && nbytes <= s->nbytes - offset;
  if (!fits) {
    format_dims(dims, sizeof(dims), shape->data, shape->ndim, 0);
    format_dtype(name, sizeof(name), dtype);
    PyErr_Format(PyExc_ValueError,
                 "alloc_tensor: %s%s (%lld bytes) at offset %lld does not fit in a storage of "
                 "%lld bytes", name, dims, (long long)nbytes, (long long)offset,
                 (long long)s->nbytes);
    return -1;
  }
  RVMNDArray* arr;
  if (RVMNDArrayCreateView(&s->header, (char*)s->data + offset, shape->data, (int)shape->ndim,
                           dtype, s->device, &arr) != 0) {
    rvm_raise_last_error();
    return -1;
  }
  ret->v_handle = arr;
  *ret_code = kRVMNDArrayHandle;
  return 0;
}

static int null_value(ARGS) {
  if (n != 0) return RVM_VM_DEFER;
  ret->v_int64 = 0;
  *ret_code = kRVMNull;
  return 0;
}

static int copy(ARGS) {
  if (n != 1) return RVM_VM_DEFER;
  if (rvm_is_object_code(codes[0])) RVMObjectRetain((RVMObject*)args[0].v_handle);
  *ret = args[0];
  *ret_code = codes[0];
  return 0;
}

static int check_tensor_info(ARGS) {
  if (n < 2 || n > 4 || !IS_TENSOR(0) || !IS_INT(1)) return RVM_VM_DEFER;
  DLTensor* t = TENSOR(0);
  if (args[1].v_int64 != -1 && args[1].v_int64 != t->ndim) return RVM_VM_DEFER;
  if (n >= 3 && codes[2] != kRVMNull) {
    if (codes[2] == kRVMDataType) {
      DLDataType want = args[2].v_type;
      if (want.code != t->dtype.code || want.bits != t->dtype.bits || want.lanes != t->dtype.lanes)
        return RVM_VM_DEFER;
    } else if (!(codes[2] == kRVMStr && args[2].v_str[0] == '\0')) {
      return RVM_VM_DEFER;
    }
  }
  *ret_code = kRVMNull;
  return 0;
}

static int check_shape_info(ARGS) {
  if (n < 2 || n > 3 || !IS_SHAPE(0) || !IS_INT(1)) return RVM_VM_DEFER;
  if (args[1].v_int64 != -1 && args[1].v_int64 != SHAPE(0)->ndim) return RVM_VM_DEFER;
  *ret_code = kRVMNull;
  return 0;
}

static int check_tuple_info(ARGS) {
  if (n < 2 || n > 3 || codes[0] != kRVMArrayHandle || !IS_INT(1)) return RVM_VM_DEFER;
  RVMArray* arr = (RVMArray*)args[0].v_handle;
  if (args[1].v_int64 != -1 && args[1].v_int64 != arr->size) return RVM_VM_DEFER;
  *ret_code = kRVMNull;
  return 0;
}

/* The slots of a shape heap argument: NULL for None; 0 when it is not a 1-d int64 tensor. */
static int heap_slots(RVMValue v, int code, int64_t** slots, int64_t* size) {
  *slots = NULL;
  *size = 0;
  if (code == kRVMNull) return 1;
  if (code != kRVMNDArrayHandle) return 0;
  DLTensor* t = &((RVMNDArray*)v.v_handle)->dl;
  if (t->ndim != 1 || t->dtype.code != kDLInt || t->dtype.bits != 64 || t->dtype.lanes != 1)
    return 0;
  *slots = (int64_t*)((char*)t->data + t->byte_offset);
  *size = t->shape[0];
  return 1;
}

static int match_shape(ARGS) {
  if (n < 3 || !IS_INT(2)) return RVM_VM_DEFER;
  const int64_t* dims;
  int64_t rank;
  if (IS_TENSOR(0)) {
    dims = TENSOR(0)->shape;
    rank = TENSOR(0)->ndim;
  } else if (IS_SHAPE(0)) {
    dims = SHAPE(0)->data;
    rank = SHAPE(0)->ndim;
  } else {
    return RVM_VM_DEFER;
  }
  int64_t ndim = args[2].v_int64;
  int64_t* slots;
  int64_t heap_size;
  if (ndim < 0 || ndim != rank || n - 3 < 2 * ndim ||
      !heap_slots(args[1], codes[1], &slots, &heap_size))
    return RVM_VM_DEFER;
  for (int64_t i = 0; i < ndim; ++i) {
    int k = 3 + 2 * (int)i;
    if (!IS_INT(k) || !IS_INT(k + 1)) return RVM_VM_DEFER;
    int64_t kind = args[k].v_int64, v = args[k + 1].v_int64;
    if (kind == kMatchNoOp) continue;
    if (kind == kMatchEqualImm) {
      if (dims[i] != v) return RVM_VM_DEFER;
      continue;
    }
    if ((kind != kMatchStore && kind != kMatchEqualHeap) || slots == NULL || v < 0 ||
        v >= heap_size)
      return RVM_VM_DEFER;
    if (kind == kMatchStore) {
      slots[v] = dims[i];
    } else if (dims[i] != slots[v]) {
      return RVM_VM_DEFER;
    }
  }
  *ret_code = kRVMNull;
  return 0;
}

static int make_shape(ARGS) {
  if (n < 2 || !IS_INT(1)) return RVM_VM_DEFER;
  int64_t ndim = args[1].v_int64;
  int64_t* slots;
  int64_t heap_size;
  if (ndim < 0 || ndim > 64 || n != 2 + 2 * ndim ||
      !heap_slots(args[0], codes[0], &slots, &heap_size))
    return RVM_VM_DEFER;
  int64_t dims[64];
  for (int64_t i = 0; i < ndim; ++i) {
    int k = 2 + 2 * (int)i;
    if (!IS_INT(k) || !IS_INT(k + 1)) return RVM_VM_DEFER;
    int64_t kind = args[k].v_int64, v = args[k + 1].v_int64;
    if (kind == kMakeImm) {
      dims[i] = v;
    } else if (kind == kMakeLoad && slots != NULL && v >= 0 && v < heap_size) {
      dims[i] = slots[v];
    } else {
      return RVM_VM_DEFER;
    }
  }
  RVMShape* shape;
  if (RVMShapeCreate(dims, ndim, &shape) != 0) {
    rvm_raise_last_error();
    return -1;
  }
  ret->v_handle = shape;
  *ret_code = kRVMShapeHandle;
  return 0;
}

static int alloc_shape_heap(ARGS) {
  if (n != 2 || !IS_INT(1) || args[1].v_int64 < 0) return RVM_VM_DEFER;
  DLDataType i64 = {kDLInt, 64, 1};
  DLDevice cpu = {kDLCPU, 0};
  RVMNDArray* arr;
  if (RVMArrayAlloc(&args[1].v_int64, 1, i64, cpu, &arr) != 0) {
    rvm_raise_last_error();
    return -1;
  }
  ret->v_handle = arr;
  *ret_code = kRVMNDArrayHandle;
  return 0;
}

static int make_tuple(ARGS) {
  for (int i = 0; i < n; ++i) {
    if (codes[i] == kRVMOpaqueHandle) return RVM_VM_DEFER; /* the VM state: a Python object */
  }
  RVMArray* arr;
  if (RVMArrayCreate(args, codes, n, &arr) != 0) {
    rvm_raise_last_error();
    return -1;
  }
  ret->v_handle = arr;
  *ret_code = kRVMArrayHandle;
  return 0;
}

static int tuple_getitem(ARGS) {
  if (n != 2 || codes[0] != kRVMArrayHandle || !IS_INT(1)) return RVM_VM_DEFER;
  RVMArray* arr = (RVMArray*)args[0].v_handle;
  int64_t index = args[1].v_int64;
  if (index < 0) index += arr->size;
  if (index < 0 || index >= arr->size) return RVM_VM_DEFER;
  *ret = arr->values[index];
  *ret_code = arr->type_codes[index];
  if (rvm_is_object_code(*ret_code)) RVMObjectRetain((RVMObject*)ret->v_handle);
  return 0;
}

static int read_if_cond(ARGS) {
  if (n != 1) return RVM_VM_DEFER;
  int64_t truth;
  if (codes[0] == kRVMBool || IS_INT(0)) {
    truth = args[0].v_int64 != 0;
  } else if (IS_TENSOR(0)) {
    DLTensor* t = TENSOR(0);
    int64_t count = 1;
    for (int i = 0; i < t->ndim; ++i) count *= t->shape[i];
    const char* p = (const char*)t->data + t->byte_offset;
    DLDataType d = t->dtype;
    if (count != 1 || d.lanes != 1) return RVM_VM_DEFER;
    if ((d.code == kDLBool || d.code == kDLInt || d.code == kDLUInt) && d.bits == 8) {
      truth = *(const uint8_t*)p != 0;
    } else if ((d.code == kDLInt || d.code == kDLUInt) && d.bits == 16) {
      truth = *(const uint16_t*)p != 0;
    } else if ((d.code == kDLInt || d.code == kDLUInt) && d.bits == 32) {
      truth = *(const uint32_t*)p != 0;
    } else if ((d.code == kDLInt || d.code == kDLUInt) && d.bits == 64) {
      truth = *(const uint64_t*)p != 0;
    } else if (d.code == kDLFloat && d.bits == 32) {
      truth = *(const float*)p != 0.0f;
    } else if (d.code == kDLFloat && d.bits == 64) {
      truth = *(const double*)p != 0.0;
    } else {
      return RVM_VM_DEFER;
    }
  } else {
    return RVM_VM_DEFER;
  }
  ret->v_int64 = truth;
  *ret_code = kRVMBool;
  return 0;
}

static int shape_of(ARGS) {
  if (n != 1 || !IS_TENSOR(0)) return RVM_VM_DEFER;
  RVMShape* shape;
  if (RVMShapeCreate(TENSOR(0)->shape, TENSOR(0)->ndim, &shape) != 0) {
    rvm_raise_last_error();
    return -1;
  }
  ret->v_handle = shape;
  *ret_code = kRVMShapeHandle;
  return 0;
}

static int reshape(ARGS) {
  if (n != 2 || !IS_TENSOR(0) || !IS_SHAPE(1)) return RVM_VM_DEFER;
  DLTensor* t = TENSOR(0);
  RVMShape* shape = SHAPE(1);
  int64_t have, want;
  if (!checked_bytes(t->shape, t->ndim, 1, &have) ||
      !checked_bytes(shape->data, shape->ndim, 1, &want) || have != want || shape->ndim > 1024)
    return RVM_VM_DEFER;
  RVMNDArray* arr;
  if (RVMNDArrayCreateView(&((RVMNDArray*)args[0].v_handle)->header,
                           (char*)t->data + t->byte_offset, shape->data, (int)shape->ndim,
                           t->dtype, t->device, &arr) != 0) {
    rvm_raise_last_error();
    return -1;
  }
  ret->v_handle = arr;
  *ret_code = kRVMNDArrayHandle;
  return 0;
}

static const struct {
  const char* name;
  RVMVMNativeFn fn;
} kBuiltins[] = {
    {"vm.builtin.alloc_storage", alloc_storage},
    {"vm.builtin.alloc_tensor", alloc_tensor},
    {"vm.builtin.null_value", null_value},
    {"vm.builtin.copy", copy},
    {"vm.builtin.check_tensor_info", check_tensor_info},
    {"vm.builtin.check_shape_info", check_shape_info},
    {"vm.builtin.check_tuple_info", check_tuple_info},
    {"vm.builtin.match_shape", match_shape},
    {"vm.builtin.make_shape", make_shape},
    {"vm.builtin.alloc_shape_heap", alloc_shape_heap},
    {"vm.builtin.make_tuple", make_tuple},
    {"vm.builtin.tuple_getitem", tuple_getitem},
    {"vm.builtin.read_if_cond", read_if_cond},
    {"vm.builtin.shape_of", shape_of},
    {"vm.builtin.reshape", reshape},
};

RVMVMNativeFn rvm_vm_find_builtin(const char* name) {
  for (size_t i = 0; i < sizeof(kBuiltins) / sizeof(kBuiltins[0]); ++i) {
    if (strcmp(kBuiltins[i].name, name) == 0) return kBuiltins[i].fn;
  }
  return NULL;
}
