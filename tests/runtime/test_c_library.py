"""A C library built against the public header, loaded at run time, talking to Python."""
import numpy as np
import pytest

import rvm
from rvm.runtime.container import Array, ShapeTuple
from rvm.support.errors import RVMError


def test_myadd(ext_library):
    assert rvm.get_global_func("myadd")(4, 5) == 9


def test_callhello_delivers_to_python(ext_library):
    received = []
    rvm.get_global_func("callhello")(received.append)
    assert received == ["hello world"]


def test_callhello_with_print(ext_library, capsys):
    rvm.get_global_func("callhello")(print)
    assert capsys.readouterr().out == "hello world\n"


def test_c_error_surfaces_with_its_message(ext_library):
    with pytest.raises(RVMError, match="^something broke in C$"):
        rvm.get_global_func("ext.fail")("something broke in C")


def test_c_error_with_python_type_prefix(ext_library):
    with pytest.raises(ValueError, match="^bad value$"):
        rvm.get_global_func("ext.fail")("ValueError: bad value")
    with pytest.raises(TypeError, match="myadd expects two ints"):
        rvm.get_global_func("myadd")(1, "two")


def test_python_exception_in_callback_from_c_keeps_type_and_message(ext_library):
    class Custom(Exception):
        pass

    def boom(msg):
        raise Custom(f"callback saw {msg!r}")

    with pytest.raises(Custom, match="callback saw 'hello world'") as info:
        rvm.get_global_func("callhello")(boom)
    # The traceback still reaches into the Python callback.
    assert any(entry.name == "boom" for entry in info.traceback)


def test_python_exception_through_two_c_frames(ext_library):
    @rvm.register_func("test.c_library.raiser", override=True)
    def raiser(x):
        raise KeyError(f"no key {x}")

    call_global = rvm.get_global_func("ext.call_global")
    with pytest.raises(KeyError, match="no key 7"):
        call_global("test.c_library.raiser", 7)


def test_c_calls_python_registered_function(ext_library):
    rvm.register_func("test.c_library.double", lambda x: x * 2, override=True)
    assert rvm.get_global_func("ext.call_global")("test.c_library.double", 21) == 42
    with pytest.raises(ValueError, match="no function 'test.c_library.nothing'"):
        rvm.get_global_func("ext.call_global")("test.c_library.nothing", 1)


@pytest.mark.parametrize("value", [
    None, True, False, 0, -7, 2**63 - 1, -2**63, 1.5, float("inf"), "", "héllo wörld",
    b"\x00bytes\xff", ShapeTuple((2, 3)), ShapeTuple(()), rvm.cpu(0),
    rvm.DataType("float32"), rvm.DataType("int8x4"),
], ids=repr)
def test_values_round_trip_through_c(ext_library, value):
    echoed = rvm.get_global_func("ext.echo")(value)
    assert echoed == value
    assert type(echoed) is type(value)


def test_containers_round_trip_through_c(ext_library):
    echo = rvm.get_global_func("ext.echo")
    out = echo((1, "two", 3.0, (4, None), b"5"))
    assert isinstance(out, Array)
    assert out == (1, "two", 3.0, Array((4, None)), b"5")
    assert echo([]) == ()
    # dicts and other registered objects cross C unchanged (opaque to C).
    d = {"a": 1}
    assert echo(d) is d


def test_ndarray_and_function_round_trip_through_c(ext_library):
    echo = rvm.get_global_func("ext.echo")
    a = rvm.nd.array(np.arange(6, dtype="float32"))
    b = echo(a)
    assert b.handle == a.handle
    np.testing.assert_array_equal(b.numpy(), a.numpy())
    f = echo(lambda x: x + 1)
    assert isinstance(f, rvm.runtime.PackedFunc) and f(1) == 2


def test_ndarray_is_read_by_c(ext_library):
    a = rvm.nd.array(np.arange(10, dtype="float32"))
    assert rvm.get_global_func("ext.sum_f32")(a) == 45.0
    # numpy arrays are passed without a copy as NDArrays.
    assert rvm.get_global_func("ext.sum_f32")(np.ones(4, "float32")) == 4.0


def test_type_codes_seen_by_c(ext_library):
    codes = rvm.get_global_func("ext.type_codes")(
        None, 1, 1.0, True, "s", b"b", rvm.DataType("int32"), rvm.cpu(),
        rvm.nd.empty((1,)), print, ShapeTuple((1,)), (1,), np.int64(3), np.float32(2))
    assert tuple(codes) == (0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13, 1, 2)


def test_callbacks_from_c_many_times(ext_library):
    seen = []
    rvm.get_global_func("ext.call_n")(seen.append, 1000)
    assert seen == list(range(1000))


def test_load_library_errors(tmp_path, ext_library):
    with pytest.raises(OSError, match="no such file"):
        rvm.runtime.load_library(tmp_path / "missing.so")
    garbage = tmp_path / "garbage.so"
    garbage.write_bytes(b"not an elf file")
    with pytest.raises(OSError, match="cannot load library"):
        rvm.runtime.load_library(garbage)


def test_loading_a_clashing_library_names_the_function(ext_library, tmp_path):
    from tests.runtime.ext_lib import build_ext_library

    # A second copy at another path registers the same names again.
    copy_dir = tmp_path / "copy"
    copy_dir.mkdir()
    path = build_ext_library(copy_dir)
    with pytest.raises(ValueError, match="'myadd' is already registered"):
        rvm.runtime.load_library(path)
