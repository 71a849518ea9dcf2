/* Reference-counted runtime objects: the common header, shapes and arrays. */
#include <stdlib.h>
#include <string.h>

#include "runtime_internal.h"

void rvm_object_init(RVMObject* obj, uint32_t type_index, void (*deleter)(RVMObject*)) {
  obj->type_index = type_index;
  obj->ref_count = 1;
  obj->deleter = deleter;
}

int RVMObjectRetain(RVMObjectHandle obj) {
  if (obj != NULL) __atomic_fetch_add(&obj->ref_count, 1, __ATOMIC_RELAXED);
  return 0;
}

int RVMObjectFree(RVMObjectHandle obj) {
  if (obj == NULL) return 0;
  if (__atomic_fetch_sub(&obj->ref_count, 1, __ATOMIC_ACQ_REL) == 1) {
    if (obj->deleter != NULL) obj->deleter(obj);
  }
  return 0;
}

int rvm_is_object_code(int type_code) {
  return type_code == kRVMNDArrayHandle || type_code == kRVMPackedFuncHandle ||
         type_code == kRVMShapeHandle || type_code == kRVMArrayHandle ||
         type_code == kRVMObjectHandle;
}

void RVMValueRelease(RVMValue value, int type_code) {
  if (rvm_is_object_code(type_code)) RVMObjectFree((RVMObject*)value.v_handle);
}

static void free_object(RVMObject* obj) { free(obj); }

int RVMShapeCreate(const int64_t* dims, int64_t ndim, RVMShape** out) {
  if (ndim < 0) {
    rvm_set_error("ValueError: a shape needs ndim >= 0, got %lld", (long long)ndim);
    return -1;
  }
  RVMShape* shape = (RVMShape*)malloc(sizeof(RVMShape) + sizeof(int64_t) * (size_t)ndim);
  if (shape == NULL) {
    rvm_set_error("MemoryError: cannot allocate a shape of %lld dimensions", (long long)ndim);
    return -1;
  }
  rvm_object_init(&shape->header, kRVMObjectShape, free_object);
  shape->ndim = ndim;
  if (ndim > 0) memcpy(shape->data, dims, sizeof(int64_t) * (size_t)ndim);
  *out = shape;
  return 0;
}

static void delete_array(RVMObject* obj) {
  RVMArray* arr = (RVMArray*)obj;
  for (int64_t i = 0; i < arr->size; ++i) {
    int code = arr->type_codes[i];
    if (code == kRVMStr) {
      free((void*)arr->values[i].v_str);
    } else if (code == kRVMBytes) {
      free(arr->values[i].v_handle);
    } else {
      RVMValueRelease(arr->values[i], code);
    }
  }
  free(arr);
}

int RVMArrayCreate(const RVMValue* values, const int* type_codes, int64_t n, RVMArray** out) {
  size_t bytes = sizeof(RVMArray) + (sizeof(RVMValue) + sizeof(int)) * (size_t)n;
  RVMArray* arr = (RVMArray*)malloc(bytes);
  if (arr == NULL) {
    rvm_set_error("MemoryError: cannot allocate an array of %lld values", (long long)n);
    return -1;
  }
  rvm_object_init(&arr->header, kRVMObjectArray, delete_array);
  arr->size = 0;
  arr->type_codes = (int*)(arr->values + n);
  for (int64_t i = 0; i < n; ++i) {
    RVMValue v = values[i];
    int code = type_codes[i];
    if (code == kRVMStr) {
      size_t len = strlen(v.v_str);
      char* copy = (char*)malloc(len + 1);
      if (copy == NULL) goto oom;
      memcpy(copy, v.v_str, len + 1);
      v.v_str = copy;
    } else if (code == kRVMBytes) {
      const RVMByteArray* src = (const RVMByteArray*)v.v_handle;
      RVMByteArray* copy = (RVMByteArray*)malloc(sizeof(RVMByteArray) + src->size);
      if (copy == NULL) goto oom;
      char* data = (char*)(copy + 1);
      memcpy(data, src->data, src->size);
      copy->data = data;
      copy->size = src->size;
      v.v_handle = copy;
    } else if (code == kRVMDLTensorHandle) {
      rvm_set_error("TypeError: an array cannot hold a borrowed DLTensor; wrap it in an NDArray");
      delete_array(&arr->header);
      return -1;
    } else if (rvm_is_object_code(code)) {
      RVMObjectRetain((RVMObject*)v.v_handle);
    }
    arr->values[i] = v;
    arr->type_codes[i] = code;
    arr->size = i + 1;
  }
  *out = arr;
  return 0;
oom:
  delete_array(&arr->header);
  rvm_set_error("MemoryError: cannot copy array element");
  return -1;
}
