"""csource_module_create: C source against rvm's runtime header, saved and rebuilt from bytes."""
import doctest

import numpy as np
import pytest

import rvm
from rvm.runtime import csource_module
from rvm.runtime.compiler import Compiler
from rvm.runtime.module import load_module_from_bytes

SOURCE = r"""
#include <rvm/c_runtime_api.h>
RVM_DLL int scale_by_three(RVMValue* args, int* codes, int n, RVMValue* ret, int* ret_code,
                           void* resource) {
  DLTensor* x = codes[0] == kRVMNDArrayHandle ? &((RVMNDArray*)args[0].v_handle)->dl
                                               : (DLTensor*)args[0].v_handle;
  DLTensor* y = codes[1] == kRVMNDArrayHandle ? &((RVMNDArray*)args[1].v_handle)->dl
                                               : (DLTensor*)args[1].v_handle;
  for (int64_t i = 0; i < x->shape[0]; ++i) ((float*)y->data)[i] = 3 * ((float*)x->data)[i];
  *ret_code = kRVMNull;
  return 0;
}
"""


def test_docstring_examples():
    assert doctest.testmod(csource_module).failed == 0


def test_compiles_against_the_runtime_header_and_round_trips_through_bytes(tmp_path):
    compiler = Compiler(cache_dir=tmp_path)
    mod = csource_module.CSourceModule.from_source(SOURCE, ["scale_by_three"], compiler)
    assert mod.type_key == "c" and not mod.from_cache and mod.get_source() == SOURCE
    x = rvm.nd.array(np.arange(4, dtype="float32"))
    y = rvm.nd.empty((4,), "float32")
    mod["scale_by_three"](x, y)
    np.testing.assert_array_equal(y.numpy(), [0, 3, 6, 9])
    with pytest.raises(ValueError, match=r"\(scale_by_three\) is a C-source module .*"
                                         r"trust_native=True"):
        csource_module.load_csource_module(mod.save_to_bytes(), compiler)
    again = csource_module.load_csource_module(mod.save_to_bytes(), compiler,
                                               trust_native=True)
    assert again.from_cache and again.function_names() == ["scale_by_three"]
    again["scale_by_three"](x, y)
    np.testing.assert_array_equal(y.numpy(), [0, 3, 6, 9])
    assert load_module_from_bytes("c", mod.save_to_bytes(), trust_native=True
                                  ).function_names() == ["scale_by_three"]


def test_changed_headers_change_the_cache_key(tmp_path):
    compiler = Compiler(cache_dir=tmp_path / "cache")
    include = tmp_path / "inc"
    include.mkdir()
    (include / "k.h").write_text("#define K 1\n")
    first = compiler.cache_key("int f(void);", ["-O3"], (include,))
    (include / "k.h").write_text("#define K 2\n")
    assert compiler.cache_key("int f(void);", ["-O3"], (include,)) != first


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="format 'cuda' is not supported"):
        rvm.runtime.csource_module_create(SOURCE, "cuda", ["scale_by_three"])
    with pytest.raises(ValueError, match="func_names must be C identifiers"):
        rvm.runtime.csource_module_create(SOURCE, "c", ["not a name"])
    with pytest.raises(TypeError, match="source must be a str"):
        rvm.runtime.csource_module_create(b"int x;", "c", ["x"])
    with pytest.raises(ValueError, match="const_vars are not supported"):
        rvm.runtime.csource_module_create(SOURCE, "c", ["scale_by_three"], ["w"])


def test_trusted_sources_compile_under_limits_and_never_echo_includes(tmp_path):
    mod = csource_module.CSourceModule.from_source(SOURCE, ["scale_by_three"],
                                                   Compiler(cache_dir=tmp_path))
    data = mod.save_to_bytes().replace(SOURCE.encode(), b'#include "/etc/passwd"\n' +
                                       b" " * (len(SOURCE.encode()) - 23))
    with pytest.raises(Exception, match="C compilation failed") as info:
        csource_module.load_csource_module(data, Compiler(cache_dir=tmp_path),
                                           trust_native=True)
    assert "root:" not in str(info.value)
