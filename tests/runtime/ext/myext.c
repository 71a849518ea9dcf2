/* A user extension library: built with only the public header, loaded with
 * rvm.runtime.load_library, its functions registered at load time. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rvm/c_runtime_api.h"

static int MyAdd(RVMValue* args, int* codes, int n, RVMValue* ret, int* ret_code, void* res) {
  if (n != 2 || codes[0] != kRVMInt || codes[1] != kRVMInt) {
    RVMAPISetLastError("TypeError: myadd expects two ints");
    return -1;
  }
  ret->v_int64 = args[0].v_int64 + args[1].v_int64;
  *ret_code = kRVMInt;
  return 0;
}
RVM_REGISTER_GLOBAL("myadd", MyAdd);

/* callhello(f): calls the packed function f("hello world"). */
static int CallHello(RVMValue* args, int* codes, int n, RVMValue* ret, int* ret_code, void* res) {
  if (n != 1 || codes[0] != kRVMPackedFuncHandle) {
    RVMAPISetLastError("TypeError: callhello expects one function");
    return -1;
  }
  RVMValue arg;
  int code = kRVMStr;
  arg.v_str = "hello world";
  RVMValue out;
  int out_code;
  if (RVMFuncCall((RVMFunctionHandle)args[0].v_handle, &arg, &code, 1, &out, &out_code) != 0) {
    return -1; /* the callee's error is already set: pass it on */
  }
  RVMValueRelease(out, out_code);
  return 0;
}
RVM_REGISTER_GLOBAL("callhello", CallHello);

/* ext.fail(msg): fails with msg as the error message. */
static int Fail(RVMValue* args, int* codes, int n, RVMValue* ret, int* ret_code, void* res) {
  RVMAPISetLastError(n == 1 && codes[0] == kRVMStr ? args[0].v_str : "ext.fail: no message");
  return -1;
}
RVM_REGISTER_GLOBAL("ext.fail", Fail);

/* ext.echo(x): returns its argument unchanged (objects with a new reference). */
static int Echo(RVMValue* args, int* codes, int n, RVMValue* ret, int* ret_code, void* res) {
  if (n != 1) {
    RVMAPISetLastError("TypeError: ext.echo expects one argument");
    return -1;
  }
  if (codes[0] == kRVMNDArrayHandle || codes[0] == kRVMPackedFuncHandle ||
      codes[0] == kRVMShapeHandle || codes[0] == kRVMArrayHandle ||
      codes[0] == kRVMObjectHandle) {
    RVMObjectRetain((RVMObject*)args[0].v_handle);
  }
  *ret = args[0];
  *ret_code = codes[0];
  return 0;
}
RVM_REGISTER_GLOBAL("ext.echo", Echo);

/* ext.type_codes(...): the type code of each argument, as an array of ints. */
static int TypeCodes(RVMValue* args, int* codes, int n, RVMValue* ret, int* ret_code, void* res) {
  RVMValue values[16];
  int value_codes[16];
  if (n > 16) n = 16;
  for (int i = 0; i < n; ++i) {
    values[i].v_int64 = codes[i];
    value_codes[i] = kRVMInt;
  }
  RVMArray* arr;
  if (RVMArrayCreate(values, value_codes, n, &arr) != 0) return -1;
  ret->v_handle = arr;
  *ret_code = kRVMArrayHandle;
  return 0;
}
RVM_REGISTER_GLOBAL("ext.type_codes", TypeCodes);

/* ext.sum_f32(x): the sum of a float32 tensor, read through its DLTensor. */
static int SumF32(RVMValue* args, int* codes, int n, RVMValue* ret, int* ret_code, void* res) {
  if (n != 1 || codes[0] != kRVMNDArrayHandle) {
    RVMAPISetLastError("TypeError: ext.sum_f32 expects one NDArray");
    return -1;
  }
  DLTensor* t = &((RVMNDArray*)args[0].v_handle)->dl;
  if (t->dtype.code != kDLFloat || t->dtype.bits != 32) {
    RVMAPISetLastError("TypeError: ext.sum_f32 expects float32");
    return -1;
  }
  int64_t count = 1;
  for (int i = 0; i < t->ndim; ++i) count *= t->shape[i];
  double total = 0;
  for (int64_t i = 0; i < count; ++i) total += ((float*)t->data)[i];
  ret->v_float64 = total;
  *ret_code = kRVMFloat;
  return 0;
}
RVM_REGISTER_GLOBAL("ext.sum_f32", SumF32);

/* ext.call_global(name, x): looks a global function up from C and calls it with x. */
static int CallGlobal(RVMValue* args, int* codes, int n, RVMValue* ret, int* ret_code, void* res) {
  if (n != 2 || codes[0] != kRVMStr) {
    RVMAPISetLastError("TypeError: ext.call_global expects (name, value)");
    return -1;
  }
  RVMFunctionHandle f;
  RVMFuncGetGlobal(args[0].v_str, &f);
  if (f == NULL) {
    char msg[256];
    snprintf(msg, sizeof(msg), "ValueError: ext.call_global: no function '%s'", args[0].v_str);
    RVMAPISetLastError(msg);
    return -1;
  }
  int rc = RVMFuncCall(f, &args[1], &codes[1], 1, ret, ret_code);
  RVMFuncFree(f);
  return rc;
}
RVM_REGISTER_GLOBAL("ext.call_global", CallGlobal);

/* ext.noop3(a, b, c): does nothing (measures the call overhead). */
static int Noop3(RVMValue* args, int* codes, int n, RVMValue* ret, int* ret_code, void* res) {
  return 0;
}
RVM_REGISTER_GLOBAL("ext.noop3", Noop3);

/* ext.call_n(f, n): calls f(i) for i in [0, n) (measures C -> packed callbacks). */
static int CallN(RVMValue* args, int* codes, int n, RVMValue* ret, int* ret_code, void* res) {
  if (n != 2 || codes[0] != kRVMPackedFuncHandle || codes[1] != kRVMInt) {
    RVMAPISetLastError("TypeError: ext.call_n expects (function, int)");
    return -1;
  }
  for (int64_t i = 0; i < args[1].v_int64; ++i) {
    RVMValue arg, out;
    int code = kRVMInt, out_code;
    arg.v_int64 = i;
    if (RVMFuncCall((RVMFunctionHandle)args[0].v_handle, &arg, &code, 1, &out, &out_code) != 0)
      return -1;
    RVMValueRelease(out, out_code);
  }
  return 0;
}
RVM_REGISTER_GLOBAL("ext.call_n", CallN);

/* ext.wait_flag(ms): 1 once another thread has called ext.set_flag (the flag is then
 * cleared), 0 if none did within ms milliseconds. */
static int flag = 0;
static int WaitFlag(RVMValue* args, int* codes, int n, RVMValue* ret, int* ret_code, void* res) {
  if (n != 1 || codes[0] != kRVMInt) {
    RVMAPISetLastError("TypeError: ext.wait_flag expects (milliseconds)");
    return -1;
  }
  ret->v_int64 = 0;
  *ret_code = kRVMInt;
  for (int64_t i = 0; i < args[0].v_int64 * 10; ++i) {
    if (__atomic_exchange_n(&flag, 0, __ATOMIC_ACQ_REL)) {
      ret->v_int64 = 1;
      break;
    }
    usleep(100);
  }
  return 0;
}
RVM_REGISTER_GLOBAL("ext.wait_flag", WaitFlag);

static int SetFlag(RVMValue* args, int* codes, int n, RVMValue* ret, int* ret_code, void* res) {
  __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
  return 0;
}
RVM_REGISTER_GLOBAL("ext.set_flag", SetFlag);
