"""PackedFunc and the global registry, from Python."""
import numpy as np
import pytest

import rvm
from rvm.runtime.container import Array, Map, ShapeTuple
from rvm.runtime.convert import convert
from rvm.runtime.packed_func import (PackedFunc, get_global_func, list_global_func_names,
                                     register_func, remove_global_func)


def test_register_as_decorator_uses_function_name():
    @register_func
    def test_pf_decorated(x):
        return x + 1

    assert get_global_func("test_pf_decorated")(1) == 2
    remove_global_func("test_pf_decorated")


def test_register_with_name_and_override():
    register_func("test.pf.named", lambda: 1)
    with pytest.raises(ValueError, match="'test.pf.named' is already registered"):
        register_func("test.pf.named", lambda: 2)
    register_func("test.pf.named", lambda: 3, override=True)
    assert get_global_func("test.pf.named")() == 3

    @register_func("test.pf.named", override=True)
    def four():
        return 4

    assert four() == 4  # the decorator returns the function itself
    assert get_global_func("test.pf.named")() == 4
    remove_global_func("test.pf.named")


def test_missing_function():
    with pytest.raises(ValueError, match="'test.pf.no_such_func' is not registered"):
        get_global_func("test.pf.no_such_func")
    assert get_global_func("test.pf.no_such_func", allow_missing=True) is None
    with pytest.raises(ValueError, match="no global function named 'test.pf.no_such_func'"):
        remove_global_func("test.pf.no_such_func")


def test_missing_function_suggests_close_names():
    register_func("test.pf.similar_name", lambda: 0, override=True)
    with pytest.raises(ValueError, match="did you mean 'test.pf.similar_name'"):
        get_global_func("test.pf.similar_nam")


def test_list_and_remove():
    register_func("test.pf.listed", lambda: 0, override=True)
    assert "test.pf.listed" in list_global_func_names()
    remove_global_func("test.pf.listed")
    assert "test.pf.listed" not in list_global_func_names()


def test_registering_a_non_callable_is_a_type_error():
    with pytest.raises(TypeError, match="expected a callable, got int"):
        register_func("test.pf.bad", 5)
    with pytest.raises(TypeError, match="expects a name"):
        register_func(5)


def test_python_to_python_keeps_values():
    seen = []
    f = PackedFunc(lambda *args: seen.append(args) or len(args))
    nd = rvm.nd.empty((2,))
    args = (None, True, 3, 2.5, "s", b"b", bytearray(b"ba"), nd, (1, [2]), rvm.cpu(),
            rvm.DataType("float16"), ShapeTuple((1, 2)), {"k": 1}, Map({"a": 1}), Array([1]))
    assert f(*args) == len(args)
    assert seen[0] == args
    assert seen[0][7] is nd


def test_callables_arrive_as_packed_funcs():
    f = PackedFunc(lambda g: (type(g), g(3)))
    kind, value = f(lambda x: x * 2)
    assert kind is PackedFunc and value == 6


def test_numpy_values_are_converted():
    f = PackedFunc(lambda *args: args)
    i, x, b, arr = f(np.int32(3), np.float32(0.5), np.bool_(True), np.arange(3.0))
    assert (type(i), type(x), type(b)) == (int, float, bool)
    assert isinstance(arr, rvm.nd.NDArray)
    np.testing.assert_array_equal(arr.numpy(), [0.0, 1.0, 2.0])


def test_returned_closures_can_be_called_again():
    def addy(y):
        def add(x):
            return convert(x + y)
        return add

    myf = convert(addy)
    assert myf(10)(11) == 21


def test_callback_returning_node_is_identity():
    x = rvm.nd.empty((1,))

    @register_func("test.pf.with_callback", override=True)
    def with_callback(y, f):
        assert y is x
        return f(y)

    f2 = convert(lambda y: y)
    assert get_global_func("test.pf.with_callback")(x, f2) is x


def test_convert():
    a = convert([1, 2, 3])
    assert isinstance(a, Array) and len(a) == 3 and a[-1] == 3
    assert tuple(a[-3:-1]) == (1, 2)
    m = convert({"a": 2, "b": 3})
    assert isinstance(m, Map) and m["b"] == 3
    assert isinstance(convert(print), PackedFunc)
    assert convert(()) == ()
    seen = []
    convert(lambda ss: seen.append(ss))(bytearray(b"hello"))
    assert seen == [bytearray(b"hello")]


def test_unsupported_argument_type_names_type_and_position():
    f = PackedFunc(lambda *args: None, "test.pf.target")
    with pytest.raises(TypeError, match=r"'test.pf.target': argument #2 has unsupported type 'set'"):
        f(1, {1, 2})
    with pytest.raises(TypeError, match=r"argument #1 has unsupported type 'complex'"):
        f(1j)
    with pytest.raises(TypeError, match=r"argument #3 has unsupported type 'object'"):
        f(1, 2, [object()])


def test_unsupported_argument_to_c_function(ext_library):
    with pytest.raises(TypeError, match=r"'myadd': argument #2 has unsupported type 'set'"):
        get_global_func("myadd")(1, {1})


def test_int_out_of_range():
    f = PackedFunc(lambda x: x, "test.pf.big")
    with pytest.raises(OverflowError, match="argument #1, integer 36893488147419103232"):
        f(2**65)


def test_keyword_arguments_are_rejected():
    f = PackedFunc(lambda x=1: x, "test.pf.kw")
    with pytest.raises(TypeError, match="positional arguments only"):
        f(x=2)


def test_python_exceptions_propagate_unchanged():
    def fail(x):
        raise ZeroDivisionError(f"divide {x}")

    with pytest.raises(ZeroDivisionError, match="divide 3"):
        PackedFunc(fail)(3)


def test_packed_func_attributes():
    f = register_func("test.pf.attrs", lambda: None, override=True)
    g = get_global_func("test.pf.attrs")
    assert g.name == "test.pf.attrs" and g.is_python and g.python_func is f
    assert "test.pf.attrs" in repr(g)
    with pytest.raises(TypeError, match="needs a callable"):
        PackedFunc(3)


def test_time_evaluator_on_packed_function():
    f = PackedFunc(lambda x: x)
    res = rvm.runtime.time_evaluator(f, number=20, repeat=3)(1)
    assert len(res.results) == 3 and res.min <= res.median <= res.max
    assert res.mean > 0
