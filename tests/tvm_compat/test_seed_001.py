"""Seed 001 (how TVM's PackedFunc works): its Python listings as written, ``tvm`` replaced
by ``rvm``: the ctypes warm-up it starts from (a C++ library called from Python and a
Python function called from C++) and a function registered from Python, fetched back as
``rvm.nd.Function``. The listings of TVM's C++ internals (TypedPackedFunc, TVMFuncGetGlobal
through ctypes) are not user code and are not here."""
import ctypes
import shutil
import subprocess

import pytest

import rvm

SEED_GLOBALS = ("my_packed_func",)


@pytest.fixture(autouse=True)
def _seed_globals():
    """The listings register global functions by fixed names, as user code does once per
    process; each test starts and ends without them."""
    def clear():
        for name in SEED_GLOBALS:
            if rvm.get_global_func(name, allow_missing=True) is not None:
                rvm.runtime.remove_global_func(name)
    clear()
    yield
    clear()

TEST_H = """
extern "C" {
int add(int a, int b);
typedef int (*PyCFunc)(int, int);
int call_py_func(PyCFunc f, int a, int b);
}
"""
TEST_CC = """
#include "test.h"
int add(int a, int b) {
  return a + b;
}
int call_py_func(PyCFunc f, int a, int b) {
  return f(a, b);
}
"""


@pytest.mark.skipif(shutil.which("c++") is None, reason="no C++ compiler installed")
def test_ctypes_warm_up(tmp_path, monkeypatch):
    (tmp_path / "test.h").write_text(TEST_H)
    (tmp_path / "test.cc").write_text(TEST_CC)
    subprocess.run(["c++", "-shared", "-fPIC", "-o", "test.so", "test.cc"], cwd=tmp_path,
                   check=True, capture_output=True, timeout=120)
    monkeypatch.chdir(tmp_path)
    # Load shared library
    _LIB = ctypes.CDLL("./test.so", ctypes.RTLD_GLOBAL)
    a = ctypes.c_int(1)
    b = ctypes.c_int(2)
    # Call C func in Python
    assert _LIB.add(a, b) == 3
    assert _LIB.add(1, 2) == 3

    def add(a, b):
        return a + b
    cfunc = ctypes.CFUNCTYPE(
        ctypes.c_int,  # return type
        ctypes.c_int,  # arg0 type
        ctypes.c_int   # arg1 type
    )
    f = cfunc(add)
    # CFUNCTYPE is callable in Python
    assert f(5, 1) == 6
    # Call Python func in C
    assert _LIB.call_py_func(f, 5, 1) == 6


def test_register_from_python_and_get_it_as_nd_function():
    targs = (10, 10.0, "hello")

    @rvm.register_func
    def my_packed_func(*args):
        assert (tuple(args) == targs)
        return 10
    # Get it out from global function table
    f = rvm.get_global_func("my_packed_func")
    assert isinstance(f, rvm.nd.Function)
    y = f(*targs)
    assert y == 10
    assert rvm.nd.Function is rvm.runtime.PackedFunc
    with pytest.raises(AssertionError):
        f(10, 10.0, "bye")
