/* The builtins implemented in C (rvm.bytecode.contract.C_BUILTINS), each the only
 * implementation of its builtin: they are registered in the global registry, so
 * both engines and Python callers reach the same code. Here: registration with
 * argument counts checked, shared helpers, memory, values and checks. Shapes,
 * tuples and conditions are in vm_builtins_shape.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm_builtins.h"

/* ---- helpers ---- */

int64_t rvm_itemsize(DLDataType t) { return ((int64_t)t.bits * t.lanes + 7) / 8; }

int rvm_checked_product(const int64_t* dims, int64_t ndim, int64_t size, int64_t* out) {
  int64_t total = size;
  for (int64_t i = 0; i < ndim; ++i) {
    if (__builtin_mul_overflow(total, dims[i], &total)) return 0;
  }
  *out = total;
  return 1;
}

static const char* dtype_base(DLDataType t) {
  if (t.code == kDLUInt && t.bits == 1) return "bool";
#define RVM_DTYPE_CASE(c, b, name) \
  if (t.code == (c) && t.bits == (b)) return name;
  RVM_DTYPE_NAMES(RVM_DTYPE_CASE)
#undef RVM_DTYPE_CASE
  return "unknown";
}

RVMText rvm_dtype_text(DLDataType t) {
  RVMText out;
  if (t.lanes == 1) {
    snprintf(out.text, sizeof(out.text), "%s", dtype_base(t));
  } else {
    snprintf(out.text, sizeof(out.text), "%sx%d", dtype_base(t), (int)t.lanes);
  }
  return out;
}

RVMText rvm_dims_text(const int64_t* dims, int64_t ndim, int as_tuple) {
  RVMText out;
  size_t size = sizeof(out.text), used = (size_t)snprintf(out.text, size, as_tuple ? "(" : "[");
  for (int64_t i = 0; i < ndim && used < size; ++i) {
    used += (size_t)snprintf(out.text + used, size - used, i ? ", %lld" : "%lld",
                             (long long)dims[i]);
  }
  if (used < size) {
    snprintf(out.text + used, size - used, "%s", as_tuple ? (ndim == 1 ? ",)" : ")") : "]");
  }
  return out;
}

RVMText rvm_tensor_text(const DLTensor* t) {
  RVMText out;
  snprintf(out.text, sizeof(out.text), "%s%s", rvm_dtype_text(t->dtype).text,
           rvm_dims_text(t->shape, t->ndim, 0).text);
  return out;
}

int rvm_int_arg(const char* where, const char* what, RVMValue* args, int* codes, int i,
                int64_t* out) {
  if (codes[i] != kRVMInt && codes[i] != kRVMBool) {
    rvm_set_error("TypeError: %s: %s must be an int, got %s", where, what, TYPE_NAME(i));
    return -1;
  }
  *out = args[i].v_int64;
  return 0;
}

const char* rvm_ctx_arg(RVMValue* args, int* codes, int n, int i, const char* fallback) {
  if (i < n && codes[i] == kRVMStr && args[i].v_str[0] != '\0') return args[i].v_str;
  return fallback;
}

int rvm_return_object(RVMValue* ret, int* ret_code, void* handle, int code) {
  ret->v_handle = handle;
  *ret_code = code;
  return 0;
}

/* ---- registration ---- */

typedef int (*BuiltinFn)(RVM_VM_BUILTIN_ARGS);

typedef struct {
  const char* name;
  BuiltinFn fn;
  int min_args, max_args; /* max -1: any number */
} Builtin;

static const Builtin kBuiltins[] = {
#define RVM_BUILTIN_ENTRY(name, symbol, min_args, max_args) {name, symbol, min_args, max_args},
    RVM_VM_C_BUILTINS(RVM_BUILTIN_ENTRY)
#undef RVM_BUILTIN_ENTRY
};

/* The packed function of every C builtin: checks the argument count, then runs it. */
static int call_builtin(RVMValue* args, int* codes, int n, RVMValue* ret, int* ret_code,
                        void* resource) {
  const Builtin* b = (const Builtin*)resource;
  if (n < b->min_args || (b->max_args >= 0 && n > b->max_args)) {
    if (b->min_args == b->max_args) {
      rvm_set_error("TypeError: %s takes %d argument(s), got %d", b->name, b->min_args, n);
    } else if (b->max_args < 0) {
      rvm_set_error("TypeError: %s takes at least %d argument(s), got %d", b->name,
                    b->min_args, n);
    } else {
      rvm_set_error("TypeError: %s takes %d to %d arguments, got %d", b->name, b->min_args,
                    b->max_args, n);
    }
    return -1;
  }
  ret->v_int64 = 0;
  *ret_code = kRVMNull;
  return b->fn(args, codes, n, ret, ret_code);
}

int rvm_vm_register_builtins(void) {
  for (size_t i = 0; i < sizeof(kBuiltins) / sizeof(kBuiltins[0]); ++i) {
    RVMFunctionHandle f;
    if (RVMFuncCreateFromCFunc(call_builtin, (void*)&kBuiltins[i], NULL, &f) != 0) return -1;
    int rc = RVMFuncRegisterGlobal(kBuiltins[i].name, f, 1);
    RVMFuncFree(f);
    if (rc != 0) return -1;
  }
  return 0;
}

/* ---- memory ---- */

int rvm_builtin_alloc_storage(RVM_VM_BUILTIN_ARGS) {
  RVMVMState* state = rvm_vm_state_of(args[0], codes[0]);
  if (state == NULL) {
    rvm_set_error("TypeError: alloc_storage: expected the VM state as argument 1, got %s",
                  TYPE_NAME(0));
    return -1;
  }
  int64_t nelem, device = 0, itemsize = 1, nbytes;
  if (codes[1] == kRVMInt) {
    nelem = args[1].v_int64;
  } else if (IS_SHAPE(1)) {
    if (!rvm_checked_product(SHAPE(1)->data, SHAPE(1)->ndim, 1, &nelem)) {
      rvm_set_error("ValueError: alloc_storage: size %s overflows int64",
                    rvm_dims_text(SHAPE(1)->data, SHAPE(1)->ndim, 1).text);
      return -1;
    }
  } else {
    rvm_set_error("TypeError: alloc_storage: size must be an int or a shape, got %s",
                  TYPE_NAME(1));
    return -1;
  }
  if (nelem < 0) {
    rvm_set_error("ValueError: alloc_storage: size must be >= 0, got %lld", (long long)nelem);
    return -1;
  }
  if (n > 2 && rvm_int_arg("alloc_storage", "device_index", args, codes, 2, &device) != 0)
    return -1;
  if (device < 0 || device >= state->num_devices) {
    rvm_set_error("ValueError: alloc_storage: device_index %lld out of range; the VM has %d "
                  "devices", (long long)device, (int)state->num_devices);
    return -1;
  }
  if (n > 3) {
    if (codes[3] != kRVMDataType) {
      rvm_set_error("TypeError: alloc_storage: dtype_hint must be a DataType, got %s",
                    TYPE_NAME(3));
      return -1;
    }
    itemsize = rvm_itemsize(args[3].v_type);
  }
  if (__builtin_mul_overflow(nelem, itemsize, &nbytes)) {
    rvm_set_error("ValueError: alloc_storage: %lld elements of %lld bytes overflow int64",
                  (long long)nelem, (long long)itemsize);
    return -1;
  }
  RVMVMStorage* s = rvm_vm_pool_alloc(&state->pools[device], nbytes);
  return s == NULL ? -1 : rvm_return_object(ret, ret_code, s, kRVMObjectHandle);
}

int rvm_builtin_alloc_tensor(RVM_VM_BUILTIN_ARGS) {
  RVMVMStorage* s = rvm_vm_storage_of(args[0], codes[0]);
  int64_t offset, nbytes = -1;
  if (s == NULL) {
    rvm_set_error("TypeError: alloc_tensor: expected a Storage, got %s", TYPE_NAME(0));
    return -1;
  }
  if (rvm_int_arg("alloc_tensor", "the offset", args, codes, 1, &offset) != 0) return -1;
  if (!IS_SHAPE(2) || codes[3] != kRVMDataType) {
    rvm_set_error("TypeError: alloc_tensor: expected a shape and a DataType, got %s and %s",
                  TYPE_NAME(2), TYPE_NAME(3));
    return -1;
  }
  RVMShape* shape = SHAPE(2);
  DLDataType dtype = args[3].v_type;
  for (int64_t i = 0; i < shape->ndim; ++i) {
    if (shape->data[i] < 0) {
      rvm_set_error("ValueError: alloc_tensor: negative dimension in shape %s",
                    rvm_dims_text(shape->data, shape->ndim, 1).text);
      return -1;
    }
  }
  int fits = rvm_checked_product(shape->data, shape->ndim, rvm_itemsize(dtype), &nbytes) &&
             offset >= 0 && offset <= s->nbytes && nbytes <= s->nbytes - offset;
  if (!fits) {
    rvm_set_error("ValueError: alloc_tensor: %s%s (%lld bytes) at offset %lld does not fit in "
                  "a storage of %lld bytes", rvm_dtype_text(dtype).text,
                  rvm_dims_text(shape->data, shape->ndim, 0).text, (long long)nbytes,
                  (long long)offset, (long long)s->nbytes);
    return -1;
  }
  RVMNDArray* arr;
  if (RVMNDArrayCreateView(&s->header, (char*)s->data + offset, shape->data, (int)shape->ndim,
                           dtype, s->device, &arr) != 0)
    return -1;
  return rvm_return_object(ret, ret_code, arr, kRVMNDArrayHandle);
}

int rvm_builtin_alloc_shape_heap(RVM_VM_BUILTIN_ARGS) {
  int64_t size;
  if (rvm_int_arg("alloc_shape_heap", "size", args, codes, 1, &size) != 0) return -1;
  if (size < 0) {
    rvm_set_error("ValueError: alloc_shape_heap: size must be >= 0, got %lld", (long long)size);
    return -1;
  }
  DLDataType i64 = {kDLInt, 64, 1};
  DLDevice cpu = {kDLCPU, 0};
  RVMNDArray* arr;
  if (RVMArrayAlloc(&size, 1, i64, cpu, &arr) != 0) return -1;
  return rvm_return_object(ret, ret_code, arr, kRVMNDArrayHandle);
}

/* ---- values ---- */

int rvm_builtin_null_value(RVM_VM_BUILTIN_ARGS) { return 0; }

int rvm_builtin_copy(RVM_VM_BUILTIN_ARGS) {
  if (rvm_is_object_code(codes[0])) RVMObjectRetain((RVMObject*)args[0].v_handle);
  *ret = args[0];
  *ret_code = codes[0];
  return 0;
}

int rvm_builtin_make_tuple(RVM_VM_BUILTIN_ARGS) {
  RVMArray* arr;
  if (RVMArrayCreate(args, codes, n, &arr) != 0) return -1;
  return rvm_return_object(ret, ret_code, arr, kRVMArrayHandle);
}

/* ---- checks ---- */

static int dtype_matches(RVMValue want, int code, DLDataType have, int* matches) {
  if (code == kRVMNull || (code == kRVMStr && want.v_str[0] == '\0')) {
    *matches = 1;
  } else if (code == kRVMDataType) {
    *matches = want.v_type.code == have.code && want.v_type.bits == have.bits &&
               want.v_type.lanes == have.lanes;
  } else if (code == kRVMStr) {
    *matches = strcmp(want.v_str, rvm_dtype_text(have).text) == 0;
  } else {
    return -1;
  }
  return 0;
}

int rvm_builtin_check_tensor_info(RVM_VM_BUILTIN_ARGS) {
  const char* ctx = rvm_ctx_arg(args, codes, n, 3, "check_tensor_info");
  int64_t ndim;
  int matches = 1;
  if (!IS_TENSOR(0)) {
    rvm_set_error("TypeError: %s: expected a Tensor, got %s", ctx, TYPE_NAME(0));
    return -1;
  }
  if (rvm_int_arg(ctx, "ndim", args, codes, 1, &ndim) != 0) return -1;
  DLTensor* t = TENSOR(0);
  if (ndim != -1 && ndim != t->ndim) {
    rvm_set_error("ValueError: %s: expected a Tensor of rank %lld, got rank %d (%s)", ctx,
                  (long long)ndim, t->ndim, rvm_tensor_text(t).text);
    return -1;
  }
  if (n > 2 && dtype_matches(args[2], codes[2], t->dtype, &matches) != 0) {
    rvm_set_error("TypeError: %s: dtype must be a DataType, a str or None, got %s", ctx,
                  TYPE_NAME(2));
    return -1;
  }
  if (!matches) {
    rvm_set_error("ValueError: %s: expected dtype %s, got %s", ctx,
                  codes[2] == kRVMStr ? args[2].v_str : rvm_dtype_text(args[2].v_type).text,
                  rvm_tensor_text(t).text);
    return -1;
  }
  return 0;
}

int rvm_builtin_check_shape_info(RVM_VM_BUILTIN_ARGS) {
  const char* ctx = rvm_ctx_arg(args, codes, n, 2, "check_shape_info");
  int64_t ndim;
  if (!IS_SHAPE(0)) {
    rvm_set_error("TypeError: %s: expected a Shape, got %s", ctx, TYPE_NAME(0));
    return -1;
  }
  if (rvm_int_arg(ctx, "ndim", args, codes, 1, &ndim) != 0) return -1;
  if (ndim != -1 && ndim != SHAPE(0)->ndim) {
    rvm_set_error("ValueError: %s: expected a Shape of %lld dimensions, got %s", ctx,
                  (long long)ndim, rvm_dims_text(SHAPE(0)->data, SHAPE(0)->ndim, 0).text);
    return -1;
  }
  return 0;
}

int rvm_builtin_check_tuple_info(RVM_VM_BUILTIN_ARGS) {
  const char* ctx = rvm_ctx_arg(args, codes, n, 2, "check_tuple_info");
  int64_t size;
  if (codes[0] != kRVMArrayHandle) {
    rvm_set_error("TypeError: %s: expected a Tuple, got %s", ctx, TYPE_NAME(0));
    return -1;
  }
  if (rvm_int_arg(ctx, "size", args, codes, 1, &size) != 0) return -1;
  RVMArray* arr = (RVMArray*)args[0].v_handle;
  if (size != -1 && size != arr->size) {
    rvm_set_error("ValueError: %s: expected a Tuple of %lld fields, got %lld", ctx,
                  (long long)size, (long long)arr->size);
    return -1;
  }
  return 0;
}

int rvm_builtin_check_func_info(RVM_VM_BUILTIN_ARGS) {
  if (codes[0] == kRVMPackedFuncHandle) return 0; /* closures and callables arrive as these */
  rvm_set_error("TypeError: %s: expected a function, got %s",
                rvm_ctx_arg(args, codes, n, 1, "check_func_info"), TYPE_NAME(0));
  return -1;
}

/* An int value fits in an integer dtype of bits bits, signed or not. */
static int int_fits(int64_t v, DLDataType t) {
  if (t.bits >= 64) return t.code != kDLUInt || v >= 0;
  int64_t span = (int64_t)1 << (t.bits - (t.code == kDLUInt ? 0 : 1));
  return t.code == kDLUInt ? v >= 0 && v < span : v >= -span && v < span;
}

int rvm_builtin_check_prim_value_info(RVM_VM_BUILTIN_ARGS) {
  const char* ctx = rvm_ctx_arg(args, codes, n, 2, "check_prim_value_info");
  int any = codes[1] == kRVMStr && args[1].v_str[0] == '\0';
  if (!any && (codes[1] != kRVMDataType || args[1].v_type.lanes != 1)) {
    rvm_set_error("TypeError: %s: dtype must be a scalar DataType or '', got %s", ctx,
                  TYPE_NAME(1));
    return -1;
  }
  DLDataType t = args[1].v_type;
  int scalar = codes[0] == kRVMInt || codes[0] == kRVMBool || codes[0] == kRVMFloat;
  int ok = any ? scalar
           : t.code == kDLBool ? codes[0] == kRVMBool
           : t.code == kDLInt || t.code == kDLUInt ? codes[0] == kRVMInt
           : t.code == kDLFloat || t.code == kDLBfloat || (t.code >= 7 && t.code <= 17) /* float8, float4 */
               ? codes[0] == kRVMInt || codes[0] == kRVMFloat
                                                      : 0;
  if (!ok) {
    rvm_set_error("TypeError: %s: expected a value of dtype %s, got %s", ctx,
                  any ? "bool, int or float" : rvm_dtype_text(t).text, TYPE_NAME(0));
    return -1;
  }
  if (!any && (t.code == kDLInt || t.code == kDLUInt) && !int_fits(args[0].v_int64, t)) {
    rvm_set_error("ValueError: %s: %lld does not fit in %s", ctx, (long long)args[0].v_int64,
                  rvm_dtype_text(t).text);
    return -1;
  }
  return 0;
}
