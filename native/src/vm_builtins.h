/* Shared by the C builtins (vm_builtins*.c): argument access and error text. Every
 * builtin reports its own errors through the runtime's last error, as
 * "ValueError: <where>: expected ..., got ...", the text both engines raise. */
#ifndef RVM_VM_BUILTINS_H_
#define RVM_VM_BUILTINS_H_

#include "vm_engine.h"

#define IS_TENSOR(i) (codes[i] == kRVMNDArrayHandle)
#define IS_SHAPE(i) (codes[i] == kRVMShapeHandle)
#define TENSOR(i) (&((RVMNDArray*)args[i].v_handle)->dl)
#define SHAPE(i) ((RVMShape*)args[i].v_handle)
#define TYPE_NAME(i) rvm_value_type_name(args[i], codes[i])

/* Fixed-size text of a dtype or dimensions for error messages. */
typedef struct {
  char text[256];
} RVMText;

/* "float32", "int8x4" */
RVMText rvm_dtype_text(DLDataType t);
/* "[1, 2]" (as_tuple 0) or "(1, 2)" / "(1,)" (as_tuple 1), as Python prints them. */
RVMText rvm_dims_text(const int64_t* dims, int64_t ndim, int as_tuple);
/* "float32[1, 2]": a tensor's dtype and shape. */
RVMText rvm_tensor_text(const DLTensor* t);

/* Argument i as an int (an int or a bool); else a TypeError naming where and what. */
int rvm_int_arg(const char* where, const char* what, RVMValue* args, int* codes, int i,
                int64_t* out);
/* The error context at argument i: a non-empty str, else fallback. */
const char* rvm_ctx_arg(RVMValue* args, int* codes, int n, int i, const char* fallback);
/* prod(dims) * size into out; 0 when it overflows int64. */
int rvm_checked_product(const int64_t* dims, int64_t ndim, int64_t size, int64_t* out);
int64_t rvm_itemsize(DLDataType t);
/* Returns value as the builtin's result: ret and ret_code set, 0. */
int rvm_return_object(RVMValue* ret, int* ret_code, void* handle, int code);

#endif /* RVM_VM_BUILTINS_H_ */
