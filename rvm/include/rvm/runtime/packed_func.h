/*
 * rvm/runtime/packed_func.h: typed functions exported as packed functions, for C++ sources
 * (TVM's <tvm/runtime/packed_func.h> with tvm replaced by rvm).
 *
 *   extern "C" int add_wrapper(DLTensor* a, DLTensor* b, DLTensor* out) { ... return 0; }
 *   RVM_DLL_EXPORT_TYPED_FUNC(add, add_wrapper);
 *
 * defines the exported packed function `add` (the calling convention of
 * <rvm/c_runtime_api.h>): it checks the argument count and each argument's type code,
 * converts the arguments to the parameter types of the typed function, calls it and
 * returns its result. A wrong argument fails the call with an error naming the function,
 * the argument, what it expects and the type code it got (RVMGetLastError).
 *
 * Parameter types: DLTensor* (a tensor handle or an NDArray), integers and bool (an int
 * or a bool), float and double (a float or an int), const char* (a string), void* (an
 * opaque handle or null). Return types: void, integers, bool, float and double.
 */
#ifndef RVM_RUNTIME_PACKED_FUNC_H_
#define RVM_RUNTIME_PACKED_FUNC_H_

#include "c_runtime_api.h"

#ifdef __cplusplus
#include <cstddef>
#include <cstdio>
#include <tuple>
#include <type_traits>
#include <utility>

namespace rvm {
namespace runtime {
namespace detail {

template <typename T, typename Enable = void>
struct ArgValue;  // a parameter type outside the list above does not compile

template <>
struct ArgValue<DLTensor*> {
  static const char* expected() { return "a tensor (DLTensor* or NDArray)"; }
  static bool get(RVMValue v, int code, DLTensor** out) {
    if (code == kRVMDLTensorHandle && v.v_handle != nullptr) {
      *out = static_cast<DLTensor*>(v.v_handle);
      return true;
    }
    if (code == kRVMNDArrayHandle && v.v_handle != nullptr) {
      *out = &static_cast<RVMNDArray*>(v.v_handle)->dl;
      return true;
    }
    return false;
  }
};

template <typename T>
struct ArgValue<T, typename std::enable_if<std::is_integral<T>::value>::type> {
  static const char* expected() { return "an int"; }
  static bool get(RVMValue v, int code, T* out) {
    if (code != kRVMInt && code != kRVMBool) return false;
    *out = static_cast<T>(v.v_int64);
    return true;
  }
};

template <typename T>
struct ArgValue<T, typename std::enable_if<std::is_floating_point<T>::value>::type> {
  static const char* expected() { return "a float"; }
  static bool get(RVMValue v, int code, T* out) {
    if (code == kRVMFloat) {
      *out = static_cast<T>(v.v_float64);
    } else if (code == kRVMInt) {
      *out = static_cast<T>(v.v_int64);
    } else {
      return false;
    }
    return true;
  }
};

template <>
struct ArgValue<const char*> {
  static const char* expected() { return "a str"; }
  static bool get(RVMValue v, int code, const char** out) {
    if (code != kRVMStr) return false;
    *out = v.v_str;
    return true;
  }
};

template <>
struct ArgValue<void*> {
  static const char* expected() { return "an opaque handle"; }
  static bool get(RVMValue v, int code, void** out) {
    if (code != kRVMOpaqueHandle && code != kRVMNull) return false;
    *out = code == kRVMNull ? nullptr : v.v_handle;
    return true;
  }
};

template <typename R, typename Enable = void>
struct SetReturn;

template <typename R>
struct SetReturn<R, typename std::enable_if<std::is_integral<R>::value>::type> {
  static void set(R value, RVMValue* ret, int* ret_code) {
    ret->v_int64 = static_cast<int64_t>(value);
    *ret_code = std::is_same<R, bool>::value ? kRVMBool : kRVMInt;
  }
};

template <typename R>
struct SetReturn<R, typename std::enable_if<std::is_floating_point<R>::value>::type> {
  static void set(R value, RVMValue* ret, int* ret_code) {
    ret->v_float64 = static_cast<double>(value);
    *ret_code = kRVMFloat;
  }
};

inline int Fail(const char* name, const char* what) {
  char msg[256];
  std::snprintf(msg, sizeof(msg), "%s: %s", name, what);
  RVMAPISetLastError(msg);
  return -1;
}

template <typename R>
struct Invoke {
  template <typename F, typename Tuple, std::size_t... I>
  static int call(F f, Tuple& values, RVMValue* ret, int* ret_code, std::index_sequence<I...>) {
    SetReturn<R>::set(f(std::get<I>(values)...), ret, ret_code);
    return 0;
  }
};

template <>
struct Invoke<void> {
  template <typename F, typename Tuple, std::size_t... I>
  static int call(F f, Tuple& values, RVMValue* ret, int* ret_code, std::index_sequence<I...>) {
    f(std::get<I>(values)...);
    *ret_code = kRVMNull;
    return 0;
  }
};

template <typename R, typename... Args, std::size_t... I>
int UnpackCall(const char* name, R (*f)(Args...), RVMValue* args, int* type_codes, int num_args,
               RVMValue* ret, int* ret_code, std::index_sequence<I...> seq) {
  char msg[200];
  if (num_args != static_cast<int>(sizeof...(Args))) {
    std::snprintf(msg, sizeof(msg), "expects %d arguments, got %d",
                  static_cast<int>(sizeof...(Args)), num_args);
    return Fail(name, msg);
  }
  std::tuple<typename std::decay<Args>::type...> values;
  const bool ok[] = {true, ArgValue<typename std::decay<Args>::type>::get(
                               args[I], type_codes[I], &std::get<I>(values))...};
  const char* expected[] = {"", ArgValue<typename std::decay<Args>::type>::expected()...};
  for (std::size_t i = 0; i < sizeof...(Args); ++i) {
    if (!ok[i + 1]) {
      std::snprintf(msg, sizeof(msg), "argument %d expects %s, got type code %d",
                    static_cast<int>(i), expected[i + 1], type_codes[i]);
      return Fail(name, msg);
    }
  }
  return Invoke<R>::call(f, values, ret, ret_code, seq);
}

template <typename R, typename... Args>
int UnpackCall(const char* name, R (*f)(Args...), RVMValue* args, int* type_codes, int num_args,
               RVMValue* ret, int* ret_code) {
  return UnpackCall(name, f, args, type_codes, num_args, ret, ret_code,
                    std::index_sequence_for<Args...>());
}

}  // namespace detail
}  // namespace runtime
}  // namespace rvm

/* Exports the typed function Function as the packed function ExportName. */
#define RVM_DLL_EXPORT_TYPED_FUNC(ExportName, Function)                                       \
  extern "C" RVM_DLL int ExportName(RVMValue* args, int* type_codes, int num_args,           \
                                    RVMValue* ret, int* ret_code, void* resource) {          \
    return ::rvm::runtime::detail::UnpackCall(#ExportName, Function, args, type_codes,       \
                                              num_args, ret, ret_code);                      \
  }

#else /* C: typed functions cannot be unpacked; say so where the macro is used */
#define RVM_DLL_EXPORT_TYPED_FUNC(ExportName, Function) \
  _Static_assert(0, "RVM_DLL_EXPORT_TYPED_FUNC(" #ExportName ") needs C++ (format \"cc\")")
#endif /* __cplusplus */
#endif /* RVM_RUNTIME_PACKED_FUNC_H_ */
