/* C builtins for shapes and tuples: symbolic-shape matching on the shape heap
 * (MatchCode / MakeCode pairs of the contract), shape_of, reshape, tuple access and
 * branch conditions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm_builtins.h"

/* The slots of a shape heap argument (NULL and size 0 for None); -1 when it is not a 1-d
 * int64 tensor. */
static int heap_slots(const char* ctx, RVMValue* args, int* codes, int i, int64_t** slots,
                      int64_t* size) {
  *slots = NULL;
  *size = 0;
  if (codes[i] == kRVMNull) return 0;
  DLTensor* t = IS_TENSOR(i) ? TENSOR(i) : NULL;
  if (t == NULL || t->ndim != 1 || t->dtype.code != kDLInt || t->dtype.bits != 64 ||
      t->dtype.lanes != 1) {
    rvm_set_error("TypeError: %s: the shape heap must be a 1-d int64 tensor, got %s", ctx,
                  t != NULL ? rvm_tensor_text(t).text : TYPE_NAME(i));
    return -1;
  }
  *slots = (int64_t*)((char*)t->data + t->byte_offset);
  *size = t->shape[0];
  return 0;
}

static int check_slot(const char* ctx, int64_t slot, int64_t size) {
  if (slot >= 0 && slot < size) return 0;
  rvm_set_error("ValueError: %s: shape heap slot %lld out of range (size %lld)", ctx,
                (long long)slot, (long long)size);
  return -1;
}

/* The codes of dimension i of a match_shape or make_shape call starting at argument first. */
static int code_pair(const char* ctx, RVMValue* args, int* codes, int first, int64_t i,
                     int64_t* kind, int64_t* value) {
  int k = first + 2 * (int)i;
  if (rvm_int_arg(ctx, "a dimension code", args, codes, k, kind) != 0) return -1;
  return rvm_int_arg(ctx, "a dimension value", args, codes, k + 1, value);
}

int rvm_builtin_match_shape(RVM_VM_BUILTIN_ARGS) {
  int64_t ndim, rank, *slots, heap_size;
  if (rvm_int_arg("match_shape", "ndim", args, codes, 2, &ndim) != 0) return -1;
  if (ndim < 0 || ndim > (n - 3) / 2) {
    rvm_set_error("ValueError: match_shape: %lld dimensions need %lld codes, got %d",
                  (long long)ndim, 2 * (long long)ndim, n - 3);
    return -1;
  }
  const char* ctx = rvm_ctx_arg(args, codes, n, 3 + 2 * (int)ndim, "match_shape");
  const int64_t* dims;
  const char* what = "tensor";
  if (IS_TENSOR(0)) {
    dims = TENSOR(0)->shape;
    rank = TENSOR(0)->ndim;
  } else if (IS_SHAPE(0)) {
    dims = SHAPE(0)->data;
    rank = SHAPE(0)->ndim;
    what = "shape";
  } else {
    rvm_set_error("TypeError: %s: expected a tensor or a shape, got %s", ctx, TYPE_NAME(0));
    return -1;
  }
  if (rank != ndim) {
    rvm_set_error("ValueError: %s: expected a %s of rank %lld, got rank %lld (shape %s)", ctx,
                  what, (long long)ndim, (long long)rank, rvm_dims_text(dims, rank, 0).text);
    return -1;
  }
  if (heap_slots(ctx, args, codes, 1, &slots, &heap_size) != 0) return -1;
  for (int64_t i = 0; i < ndim; ++i) {
    int64_t kind, v;
    if (code_pair(ctx, args, codes, 3, i, &kind, &v) != 0) return -1;
    if (kind == kRVMMatchNoOp) continue;
    if (kind == kRVMMatchEqualImm) {
      if (dims[i] == v) continue;
      rvm_set_error("ValueError: %s: dimension %lld expected %lld, got %lld (shape %s)", ctx,
                    (long long)i, (long long)v, (long long)dims[i],
                    rvm_dims_text(dims, rank, 0).text);
      return -1;
    }
    if (kind != kRVMMatchStore && kind != kRVMMatchStoreSize && kind != kRVMMatchEqualHeap) {
      rvm_set_error("ValueError: %s: unknown match_shape kind %lld", ctx, (long long)kind);
      return -1;
    }
    if (check_slot(ctx, v, heap_size) != 0) return -1;
    if (kind == kRVMMatchStoreSize && dims[i] < 0) {
      rvm_set_error("ValueError: %s: dimension %lld is %lld, but it defines a size, which "
                    "must be >= 0 (shape %s)", ctx, (long long)i, (long long)dims[i],
                    rvm_dims_text(dims, rank, 0).text);
      return -1;
    }
    if (kind == kRVMMatchStore || kind == kRVMMatchStoreSize) {
      slots[v] = dims[i];
    } else if (dims[i] != slots[v]) {
      rvm_set_error("ValueError: %s: dimension %lld expected %lld (bound by an earlier match), "
                    "got %lld (shape %s)", ctx, (long long)i, (long long)slots[v],
                    (long long)dims[i], rvm_dims_text(dims, rank, 0).text);
      return -1;
    }
  }
  return 0;
}

int rvm_builtin_match_prim_value(RVM_VM_BUILTIN_ARGS) {
  const char* ctx = rvm_ctx_arg(args, codes, n, 4, "match_prim_value");
  int64_t kind, v, *slots, heap_size, expected;
  if (codes[0] != kRVMInt) {
    rvm_set_error("TypeError: %s: expected an integer, got %s", ctx, TYPE_NAME(0));
    return -1;
  }
  if (code_pair(ctx, args, codes, 2, 0, &kind, &v) != 0 ||
      heap_slots(ctx, args, codes, 1, &slots, &heap_size) != 0)
    return -1;
  if (kind == kRVMMatchNoOp) return 0;
  if (kind == kRVMMatchEqualImm) {
    expected = v;
  } else if (kind == kRVMMatchStore || kind == kRVMMatchStoreSize ||
             kind == kRVMMatchEqualHeap) {
    if (check_slot(ctx, v, heap_size) != 0) return -1;
    if (kind == kRVMMatchStoreSize && args[0].v_int64 < 0) {
      rvm_set_error("ValueError: %s: the value is %lld, but it defines a size, which must be "
                    ">= 0", ctx, (long long)args[0].v_int64);
      return -1;
    }
    if (kind == kRVMMatchStore || kind == kRVMMatchStoreSize) {
      slots[v] = args[0].v_int64;
      return 0;
    }
    expected = slots[v];
  } else {
    rvm_set_error("ValueError: %s: unknown match_prim_value kind %lld", ctx, (long long)kind);
    return -1;
  }
  if (args[0].v_int64 == expected) return 0;
  rvm_set_error("ValueError: %s: expected the value %lld, got %lld", ctx, (long long)expected,
                (long long)args[0].v_int64);
  return -1;
}

/* A size computed from other sizes (n - 5) must not be negative: refused where it is
 * computed, naming it and the variables it was computed from, before any allocation or
 * kernel sees it. */
int rvm_builtin_check_size(RVM_VM_BUILTIN_ARGS) {
  const char* ctx = rvm_ctx_arg(args, codes, n, 2, "check_size");
  int64_t slot, *slots, heap_size;
  if (rvm_int_arg(ctx, "the slot", args, codes, 1, &slot) != 0 ||
      heap_slots(ctx, args, codes, 0, &slots, &heap_size) != 0 ||
      check_slot(ctx, slot, heap_size) != 0)
    return -1;
  if ((n - 3) % 2 != 0) {
    rvm_set_error("ValueError: %s: variables come as (name, slot) pairs, got %d arguments "
                  "after the context", ctx, n - 3);
    return -1;
  }
  for (int i = 3; i < n; i += 2) {
    int64_t var_slot;
    if (codes[i] != kRVMStr) {
      rvm_set_error("TypeError: %s: a variable name must be a str, got %s", ctx, TYPE_NAME(i));
      return -1;
    }
    if (rvm_int_arg(ctx, "a variable slot", args, codes, i + 1, &var_slot) != 0 ||
        check_slot(ctx, var_slot, heap_size) != 0)
      return -1;
  }
  if (slots[slot] >= 0) return 0;
  char vars[512];
  size_t used = 0;
  vars[0] = '\0';
  for (int i = 3; i < n && used < sizeof(vars); i += 2) {
    int w = snprintf(vars + used, sizeof(vars) - used, "%s%s = %lld", i == 3 ? " (" : ", ",
                     args[i].v_str, (long long)slots[args[i + 1].v_int64]);
    used = w < 0 ? sizeof(vars) : used + (size_t)w;
  }
  rvm_set_error("ValueError: %s is %lld%s%s, but a size must be >= 0", ctx,
                (long long)slots[slot], vars, n > 3 ? ")" : "");
  return -1;
}

int rvm_builtin_make_shape(RVM_VM_BUILTIN_ARGS) {
  int64_t ndim, *slots, heap_size;
  if (rvm_int_arg("make_shape", "ndim", args, codes, 1, &ndim) != 0) return -1;
  if (ndim < 0 || 2 * ndim != n - 2) {
    rvm_set_error("ValueError: make_shape: %lld dimensions need %lld codes, got %d",
                  (long long)ndim, 2 * (long long)ndim, n - 2);
    return -1;
  }
  if (heap_slots("make_shape", args, codes, 0, &slots, &heap_size) != 0) return -1;
  int64_t stack_dims[16];
  int64_t* dims = ndim <= 16 ? stack_dims : (int64_t*)malloc(sizeof(int64_t) * (size_t)ndim);
  int rc = dims == NULL ? -1 : 0;
  if (dims == NULL) rvm_set_error("MemoryError: make_shape: %lld dimensions", (long long)ndim);
  for (int64_t i = 0; rc == 0 && i < ndim; ++i) {
    int64_t kind, v;
    rc = code_pair("make_shape", args, codes, 2, i, &kind, &v);
    if (rc != 0) break;
    if (kind == kRVMMakeImm) {
      dims[i] = v;
    } else if (kind == kRVMMakeLoad) {
      rc = check_slot("make_shape", v, heap_size);
      if (rc == 0) dims[i] = slots[v];
    } else {
      rvm_set_error("ValueError: make_shape: unknown kind %lld", (long long)kind);
      rc = -1;
    }
  }
  RVMShape* shape = NULL;
  if (rc == 0) rc = RVMShapeCreate(dims, ndim, &shape);
  if (dims != stack_dims) free(dims);
  return rc != 0 ? -1 : rvm_return_object(ret, ret_code, shape, kRVMShapeHandle);
}

int rvm_builtin_shape_of(RVM_VM_BUILTIN_ARGS) {
  RVMShape* shape;
  if (!IS_TENSOR(0)) {
    rvm_set_error("TypeError: shape_of: expected a Tensor, got %s", TYPE_NAME(0));
    return -1;
  }
  if (RVMShapeCreate(TENSOR(0)->shape, TENSOR(0)->ndim, &shape) != 0) return -1;
  return rvm_return_object(ret, ret_code, shape, kRVMShapeHandle);
}

int rvm_builtin_reshape(RVM_VM_BUILTIN_ARGS) {
  if (!IS_TENSOR(0) || !IS_SHAPE(1)) {
    rvm_set_error("TypeError: reshape: expected a Tensor and a shape, got %s and %s",
                  TYPE_NAME(0), TYPE_NAME(1));
    return -1;
  }
  DLTensor* t = TENSOR(0);
  RVMShape* shape = SHAPE(1);
  int64_t have = 0, want = -1;
  int valid = rvm_checked_product(t->shape, t->ndim, 1, &have) &&
              rvm_checked_product(shape->data, shape->ndim, 1, &want);
  for (int64_t i = 0; i < shape->ndim; ++i) valid &= shape->data[i] >= 0;
  if (!valid || have != want) {
    rvm_set_error("ValueError: reshape: cannot view %s (%lld elements) as shape %s",
                  rvm_tensor_text(t).text, (long long)have,
                  rvm_dims_text(shape->data, shape->ndim, 0).text);
    return -1;
  }
  RVMNDArray* arr;
  if (RVMNDArrayCreateView(&((RVMNDArray*)args[0].v_handle)->header,
                           (char*)t->data + t->byte_offset, shape->data, (int)shape->ndim,
                           t->dtype, t->device, &arr) != 0)
    return -1;
  return rvm_return_object(ret, ret_code, arr, kRVMNDArrayHandle);
}

int rvm_builtin_tuple_getitem(RVM_VM_BUILTIN_ARGS) {
  int64_t index, size;
  if (codes[0] == kRVMArrayHandle) {
    size = ((RVMArray*)args[0].v_handle)->size;
  } else if (IS_SHAPE(0)) {
    size = SHAPE(0)->ndim;
  } else {
    rvm_set_error("TypeError: tuple_getitem: expected a Tuple, got %s", TYPE_NAME(0));
    return -1;
  }
  if (rvm_int_arg("tuple_getitem", "the index", args, codes, 1, &index) != 0) return -1;
  if (index < -size || index >= size) {
    rvm_set_error("IndexError: tuple_getitem: index %lld out of range for a tuple of %lld "
                  "fields", (long long)index, (long long)size);
    return -1;
  }
  if (index < 0) index += size;
  if (IS_SHAPE(0)) {
    ret->v_int64 = SHAPE(0)->data[index];
    *ret_code = kRVMInt;
    return 0;
  }
  RVMArray* arr = (RVMArray*)args[0].v_handle;
  *ret = arr->values[index];
  *ret_code = arr->type_codes[index];
  if (rvm_is_object_code(*ret_code)) RVMObjectRetain((RVMObject*)ret->v_handle);
  return 0;
}

/* The truth of a one-element tensor: 1, 0, or -1 for a dtype without one. */
static int scalar_truth(const DLTensor* t) {
  const char* p = (const char*)t->data + t->byte_offset;
  DLDataType d = t->dtype;
  if (d.lanes != 1) return -1;
  if (d.code == kDLBool || d.code == kDLInt || d.code == kDLUInt) {
    switch (d.bits) {
      case 8:
        return *(const uint8_t*)p != 0;
      case 16:
        return *(const uint16_t*)p != 0;
      case 32:
        return *(const uint32_t*)p != 0;
      case 64:
        return *(const uint64_t*)p != 0;
    }
  } else if (d.code == kDLFloat || d.code == kDLBfloat) {
    switch (d.bits) {
      case 16:
        return (*(const uint16_t*)p & 0x7fff) != 0; /* any bit but the sign: not +-0 */
      case 32:
        return *(const float*)p != 0.0f;
      case 64:
        return *(const double*)p != 0.0;
    }
  }
  return -1;
}

int rvm_builtin_read_if_cond(RVM_VM_BUILTIN_ARGS) {
  int truth;
  if (codes[0] == kRVMBool || codes[0] == kRVMInt) {
    truth = args[0].v_int64 != 0;
  } else if (IS_TENSOR(0)) {
    DLTensor* t = TENSOR(0);
    int64_t count = 1;
    rvm_checked_product(t->shape, t->ndim, 1, &count);
    truth = count == 1 ? scalar_truth(t) : -1;
    if (truth < 0) {
      rvm_set_error("ValueError: if condition must be a scalar tensor, got %s",
                    rvm_tensor_text(t).text);
      return -1;
    }
  } else {
    rvm_set_error("TypeError: if condition must be a bool, int or scalar tensor, got %s",
                  TYPE_NAME(0));
    return -1;
  }
  ret->v_int64 = truth;
  *ret_code = kRVMBool;
  return 0;
}
