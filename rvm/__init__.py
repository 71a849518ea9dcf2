"""rvm: a Relax-style machine-learning compiler and bytecode virtual machine.

This module is a facade re-exporting the user-facing names; compiler
packages load on first use, so ``import rvm`` stays cheap and the runtime
works without the compiler (``rvm.codegen.c.load`` imports the code generator when
a file's kernels are regenerated).
"""
import importlib

from rvm import nd, runtime
from rvm.bytecode import executable as _executable  # registers the executable file format
from rvm.runtime.data_type import DataType
from rvm.runtime.device import Device, cpu, cuda, device, metal, opencl, rocm, vulkan
from rvm.runtime.packed_func import get_global_func, register_func
from rvm.support.errors import RVMError, TVMError

__version__ = "0.1.0"

try:  # the compiler side's loader of saved kernels, regenerating them from their TIR
    from rvm.codegen.c import load as _load  # noqa: F401
except ModuleNotFoundError as err:  # a runtime-only install: the runtime's loader refuses
    if not (err.name or "").startswith("rvm.codegen"):
        raise

_LAZY_SUBMODULES = (
    "support", "bytecode", "vm", "ir", "tir", "te", "topi", "relax", "script", "codegen",
    "driver", "meta_schedule", "target", "testing", "error", "contrib",
)


_LAZY_ATTRS = {
    "build": ("rvm.driver.build_module", "build"),
    "compile": ("rvm.driver.compile", "compile"),
    "IRModule": ("rvm.ir.module", "IRModule"),
}


def __getattr__(name):
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f"rvm.{name}")
    if name == "transform":  # TVM's tvm.transform: the pass infrastructure
        return importlib.import_module("rvm.ir.transform")
    if name in _LAZY_ATTRS:
        module, attr = _LAZY_ATTRS[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'rvm' has no attribute {name!r}")


__all__ = ["DataType", "Device", "RVMError", "TVMError", "cpu", "cuda", "device", "get_global_func",
           "metal", "nd", "opencl", "register_func", "rocm", "runtime", "vulkan"]
