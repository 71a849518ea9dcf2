"""SPEC §1, as written: packed functions and the global registry."""
import subprocess
import sys
import textwrap

import pytest

from tests.runtime.ext_lib import build_ext_library


def test_spec_1_program():
    import rvm

    targs = (10, 10.0, "hello")

    @rvm.register_func                       # name defaults to the function's name
    def my_packed_func(*args):
        assert tuple(args) == targs
        return 10

    f = rvm.get_global_func("my_packed_func")
    assert isinstance(f, rvm.runtime.PackedFunc)
    assert f(*targs) == 10

    rvm.register_func("env.relu", lambda x, out: ..., override=True)   # re-register
    with pytest.raises(ValueError, match="no.such.func"):
        rvm.get_global_func("no.such.func")                    # ValueError naming it
    assert rvm.get_global_func("no.such.func", allow_missing=True) is None
    assert "my_packed_func" in rvm.runtime.list_global_func_names()
    rvm.runtime.remove_global_func("my_packed_func")


def test_spec_1_convert_and_closures():
    import rvm

    a = rvm.runtime.convert([1, 2, 3])
    assert len(a) == 3 and a[-1] == 3 and tuple(a[-3:-1]) == (1, 2)
    assert rvm.runtime.convert({"a": 2, "b": 3})["a"] == 2
    assert isinstance(rvm.runtime.convert(print), rvm.runtime.PackedFunc)

    def addy(y):
        def add(x):
            return x + y
        return add

    assert rvm.runtime.convert(addy)(10)(11) == 21


def test_spec_1_c_library_in_a_fresh_process(tmp_path):
    """load_library("lib/libext.so") as in SPEC, in a process with a fresh registry."""
    (tmp_path / "lib").mkdir()
    build_ext_library(tmp_path / "lib")
    program = textwrap.dedent("""
        import rvm
        rvm.runtime.load_library("lib/libext.so")
        assert rvm.get_global_func("myadd")(4, 5) == 9
        callhello = rvm.get_global_func("callhello")
        callhello(print)
        try:
            rvm.get_global_func("ext.fail")("ValueError: from C")
        except ValueError as err:
            print("caught", err)
        def raiser(msg):
            raise KeyError(msg)
        try:
            callhello(raiser)
        except KeyError as err:
            print("caught", err)
    """)
    out = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["hello world", "caught from C", "caught 'hello world'"]
