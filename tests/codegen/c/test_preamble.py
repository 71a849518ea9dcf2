"""The generated sources' ABI declarations match the runtime's real headers."""
import ctypes
import pathlib

from rvm.codegen.c.preamble import render_preamble
from rvm.runtime.compiler import Compiler

HEADER = (pathlib.Path(__file__).resolve().parents[3] / "rvm" / "include" / "rvm"
          / "c_runtime_api.h")

LAYOUT = """
#include <stddef.h>
#include <stdint.h>
int64_t rvm_layout(int i) {
  int64_t v[] = {
    sizeof(DLTensor), offsetof(DLTensor, data), offsetof(DLTensor, device),
    offsetof(DLTensor, ndim), offsetof(DLTensor, dtype), offsetof(DLTensor, shape),
    offsetof(DLTensor, strides), offsetof(DLTensor, byte_offset), sizeof(DLDataType),
    sizeof(DLDevice), sizeof(RVMValue), sizeof(RVMObject), offsetof(RVMNDArray, dl),
    kRVMInt, kRVMFloat, kRVMBool, kRVMStr, kRVMDLTensorHandle, kRVMNDArrayHandle, kRVMNull,
    kRVMOpaqueHandle, sizeof(RVMKernelContext), offsetof(RVMKernelContext, cancel),
    offsetof(RVMKernelContext, polls_left), offsetof(RVMKernelContext, refused),
    offsetof(RVMKernelContext, budget), offsetof(RVMKernelContext, step_limit),
    offsetof(RVMKernelContext, time_limit), kRVMCancelInterrupt, kRVMCancelTimeout,
  };
  return i < (int)(sizeof(v) / sizeof(v[0])) ? v[i] : -1;
}
"""


def _layout(source, tmp_path):
    lib = ctypes.CDLL(str(Compiler(cache_dir=tmp_path).compile(source).path))
    lib.rvm_layout.restype = ctypes.c_int64
    values = []
    while (v := lib.rvm_layout(len(values))) != -1:
        values.append(v)
    return values


def test_preamble_layout_matches_runtime_headers(tmp_path):
    ours = _layout(render_preamble(use_openmp=False) + LAYOUT, tmp_path)
    real = _layout(f'#include "{HEADER}"\n' + LAYOUT, tmp_path)
    assert ours == real and len(ours) == 30
