"""rvm.runtime: tensors, devices, packed functions and the global registry.

This package is a facade; the definitions live in its modules.
"""
from rvm.runtime._ffi import native_library_path
from rvm.runtime._ffi import _bridge as _bridge
from rvm.runtime.container import Array, Map, ShapeTuple
from rvm.runtime.convert import convert
from rvm.runtime.data_type import DataType
from rvm.runtime.device import Device, cpu, device
from rvm.runtime import kernel_library as _kernel_library  # registers the 'c_kernels' loader
from rvm.runtime.csource_module import CSourceModule, csource_module_create, find_include_path
from rvm.runtime.example_json import ExampleJSONModule
from rvm.runtime.library import load_library
from rvm.runtime.loader import load_module
from rvm.runtime.module import Module, register_module_loader
from rvm.runtime.ndarray import NDArray
from rvm.runtime.object_path import ObjectPath
from rvm.runtime.packed_func import (
    PackedFunc,
    get_global_func,
    list_global_func_names,
    register_func,
    register_object_type,
    remove_global_func,
)
from rvm.runtime.profiling import BenchmarkResult, time_evaluator
from rvm.runtime import random as _random  # registers runtime.random.dropout_mask
from rvm.runtime.threads import config_threadpool, num_threads, set_num_threads

Object = _bridge.Object

__all__ = [
    "Array", "BenchmarkResult", "CSourceModule", "DataType", "Device", "ExampleJSONModule", "Map",
    "Module", "NDArray", "Object", "ObjectPath", "PackedFunc", "ShapeTuple", "config_threadpool",
    "convert", "cpu", "csource_module_create", "device", "find_include_path", "get_global_func",
    "list_global_func_names", "load_library", "load_module", "native_library_path",
    "num_threads", "register_func", "register_module_loader", "register_object_type",
    "remove_global_func", "set_num_threads", "time_evaluator",
]
