"""KernelLibrary over hand-written packed C kernels: calls, errors, timing, bytes."""
import pathlib
import threading
import time

import numpy as np
import pytest

import rvm
from rvm.runtime.compiler import Compiler
from rvm.runtime.kernel_library import KernelLibrary, kernel_symbol, load_kernel_library
from rvm.runtime.module import load_module_from_bytes

HEADER = (pathlib.Path(__file__).resolve().parents[2] / "rvm" / "include" / "rvm"
          / "c_runtime_api.h")

SOURCE = """
#include <time.h>
#include "%s"
static DLTensor* as_tensor(RVMValue v, int code) {
  if (code == kRVMDLTensorHandle) return (DLTensor*)v.v_handle;
  if (code == kRVMNDArrayHandle) return &((RVMNDArray*)v.v_handle)->dl;
  return 0;
}
/* out[i] = a[i] + b[i], float32 */
RVM_DLL int rvm_kernel_add(RVMValue* args, int* codes, int n, RVMValue* ret, int* ret_code,
                           void* resource) {
  if (n != 3) {
    RVMAPISetLastError("ValueError: add: expected 3 arguments");
    return -1;
  }
  DLTensor* a = as_tensor(args[0], codes[0]);
  DLTensor* b = as_tensor(args[1], codes[1]);
  DLTensor* c = as_tensor(args[2], codes[2]);
  if (!a || !b || !c) {
    RVMAPISetLastError("TypeError: add: expected tensors");
    return -1;
  }
  float* pa = (float*)a->data;
  float* pb = (float*)b->data;
  float* pc = (float*)c->data;
  for (int64_t i = 0; i < a->shape[0]; ++i) pc[i] = pa[i] + pb[i];
  return 0;
}
/* calls the global function named by its first argument with its second */
RVM_DLL int rvm_kernel_call_global(RVMValue* args, int* codes, int n, RVMValue* ret,
                                   int* ret_code, void* resource) {
  RVMFunctionHandle f = 0;
  if (RVMFuncGetGlobal(args[0].v_str, &f) != 0 || f == 0) {
    RVMAPISetLastError("ValueError: call_global: no such function");
    return -1;
  }
  int rc = RVMFuncCall(f, args + 1, codes + 1, n - 1, ret, ret_code);
  RVMFuncFree(f);
  return rc;
}
/* flag: int32[2]; sets flag[1] = 1, then waits until flag[0] is nonzero (at most 10 s) */
RVM_DLL int rvm_kernel_wait_flag(RVMValue* args, int* codes, int n, RVMValue* ret,
                                 int* ret_code, void* resource) {
  volatile int32_t* flag = (volatile int32_t*)as_tensor(args[0], codes[0])->data;
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  flag[1] = 1;
  while (flag[0] == 0) {
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - start.tv_sec > 10) {
      RVMAPISetLastError("wait_flag: the flag was not set within 10 s");
      return -1;
    }
  }
  return 0;
}
""" % HEADER


@pytest.fixture(scope="module")
def lib():
    return KernelLibrary.from_source(SOURCE, ["add", "call_global", "wait_flag"])


def test_kernel_symbol_names():
    assert kernel_symbol("main") == "rvm_kernel_main"
    assert kernel_symbol("fused.add-1") == "rvm_kernel_fused_add_1"


def test_call_with_ndarrays_and_numpy(lib):
    a = np.arange(5, dtype="float32")
    b = np.ones(5, dtype="float32")
    out = rvm.nd.empty((5,), "float32")
    lib["add"](rvm.nd.array(a), b, out)
    np.testing.assert_allclose(out.numpy(), a + b)
    assert isinstance(lib.get_function("add"), rvm.runtime.PackedFunc)
    assert lib.get_function("add") is lib.get_function("add")
    assert sorted(lib.function_names()) == ["add", "call_global", "wait_flag"]


def test_errors_cross_as_python_exceptions(lib):
    with pytest.raises(ValueError, match="expected 3 arguments"):
        lib["add"](1, 2)
    with pytest.raises(TypeError, match="expected tensors"):
        lib["add"](1, 2, 3)
    with pytest.raises(ValueError, match="no function 'nope'"):
        lib.get_function("nope")


def test_kernel_calls_python_registry(lib):
    seen = []
    rvm.register_func("test.kernel_library.callback", lambda x: seen.append(x) or x * 2,
                      override=True)
    assert lib["call_global"]("test.kernel_library.callback", 21) == 42
    assert seen == [21]


def test_time_evaluator(lib):
    a = rvm.nd.array(np.ones(16, "float32"))
    result = lib.time_evaluator("add", rvm.cpu(), number=3, repeat=2)(a, a, a)
    assert len(result.results) == 2 and result.mean > 0


def test_get_source(lib):
    assert lib.get_source() == SOURCE
    with pytest.raises(ValueError, match="format"):
        lib.get_source("asm")


def test_hand_written_c_loads_only_when_trusted(lib, tmp_path):
    data = lib.save_to_bytes()
    with pytest.raises(ValueError,
                       match=r"\(add, call_global, wait_flag\) holds hand-written C .*"
                             r"trust_native=True"):
        load_kernel_library(data, Compiler(cache_dir=tmp_path))
    compiler = Compiler(cache_dir=tmp_path)
    loaded = load_kernel_library(data, compiler, trust_native=True)
    assert compiler.invocations == 1  # a cold cache: compiled from the embedded source
    out = rvm.nd.empty((2,), "float32")
    loaded["add"](np.ones(2, "float32"), np.ones(2, "float32"), out)
    np.testing.assert_allclose(out.numpy(), [2, 2])
    again = load_kernel_library(data, compiler, trust_native=True)
    assert again.from_cache and compiler.invocations == 1
    assert isinstance(load_module_from_bytes("c_kernels", data, trust_native=True),
                      KernelLibrary)


def test_loading_ignores_the_shipped_object(lib, tmp_path):
    data = bytearray(lib.save_to_bytes())
    data[-100:] = b"\0" * 100  # damage the object: it is never loaded
    loaded = load_kernel_library(bytes(data), Compiler(cache_dir=tmp_path), trust_native=True)
    assert loaded.get_source() == SOURCE


@pytest.mark.parametrize("damage, message", [
    (lambda d: b"XXXXXXXX" + d[8:], "bad magic"),
    (lambda d: d[:20], "truncated"),
    (lambda d: d + b"x", "trailing"),
])
def test_damaged_bytes_are_rejected(lib, damage, message):
    with pytest.raises(ValueError, match=message):
        load_kernel_library(damage(lib.save_to_bytes()))


def test_missing_symbol_is_reported():
    with pytest.raises(ValueError, match="rvm_kernel_absent"):
        KernelLibrary.from_source(SOURCE, ["add", "absent"])


def test_function_addresses(lib):
    address = lib.get_function_address("add")
    assert isinstance(address, int) and address != 0
    with pytest.raises(ValueError, match="no function 'nope'"):
        lib.get_function_address("nope")


def test_symbols_of_other_libraries_are_refused(tmp_path):
    # With libc linked in, 'system' resolves through the library's dependencies.
    source = SOURCE + '#include <stdio.h>\nint rvm_note(const char* s) { return puts(s); }\n'
    with pytest.raises(ValueError, match="symbols it does not define: 'add' -> 'system'"):
        KernelLibrary.from_source(source, {"add": "system"}, Compiler(cache_dir=tmp_path))


def test_a_kernel_called_from_python_runs_without_the_gil(lib):
    """The kernel waits for a flag that only another Python thread sets, once the kernel has
    started: with the GIL held for the call, that thread could never run."""
    flag = rvm.nd.array(np.zeros(2, "int32"))
    view = np.from_dlpack(flag)

    def set_flag_once_the_kernel_waits():
        deadline = time.monotonic() + 10
        while view[1] == 0 and time.monotonic() < deadline:
            time.sleep(0.001)
        view[0] = 1

    setter = threading.Thread(target=set_flag_once_the_kernel_waits)
    setter.start()
    lib["wait_flag"](flag)
    setter.join()
    assert list(view) == [1, 1]
