/* Packed function objects and the call entry point. */
#include <stdlib.h>

#include "runtime_internal.h"

static void delete_function(RVMObject* obj) {
  RVMFunctionObj* f = (RVMFunctionObj*)obj;
  if (f->finalizer != NULL) f->finalizer(f->resource);
  free(f);
}

int RVMFuncCreateFromCFunc(RVMPackedCFunc func, void* resource, RVMResourceFinalizer fin,
                           RVMFunctionHandle* out) {
  if (func == NULL) {
    rvm_set_error("ValueError: RVMFuncCreateFromCFunc needs a function pointer, got NULL");
    return -1;
  }
  RVMFunctionObj* f = (RVMFunctionObj*)malloc(sizeof(RVMFunctionObj));
  if (f == NULL) {
    rvm_set_error("MemoryError: cannot allocate a function object");
    return -1;
  }
  rvm_object_init(&f->header, kRVMObjectFunction, delete_function);
  f->func = func;
  f->resource = resource;
  f->finalizer = fin;
  f->releases_gil = 0;
  *out = &f->header;
  return 0;
}

int RVMFuncCall(RVMFunctionHandle func, RVMValue* args, int* type_codes, int num_args,
                RVMValue* ret, int* ret_code) {
  if (func == NULL || func->type_index != kRVMObjectFunction) {
    rvm_set_error("TypeError: RVMFuncCall expects a function handle");
    return -1;
  }
  RVMFunctionObj* f = (RVMFunctionObj*)func;
  *ret_code = kRVMNull;
  ret->v_int64 = 0;
  return f->func(args, type_codes, num_args, ret, ret_code, f->resource);
}

int RVMFuncFree(RVMFunctionHandle func) { return RVMObjectFree(func); }
