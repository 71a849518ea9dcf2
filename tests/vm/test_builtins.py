"""vm.builtin.*: shape matching on the shape heap, checks, reshape, conditions, tuples, and
the errors each reports itself (the same text from Python, and from either engine)."""
import numpy as np
import pytest

from rvm.bytecode.builder import ExecBuilder
from rvm.bytecode.contract import C_BUILTINS, MakeCode, MatchCode
from rvm.runtime.container import Array, ShapeTuple
from rvm.runtime.data_type import DataType
from rvm.runtime.device import cpu
from rvm.runtime.ndarray import array, empty
from rvm.runtime.packed_func import get_global_func
from rvm.vm.machine import VirtualMachine

MATCH_EQUAL_IMM, MATCH_STORE, MATCH_NO_OP, MATCH_EQUAL_HEAP, MATCH_STORE_SIZE = (
    int(c) for c in MatchCode)
MAKE_IMM, MAKE_LOAD = (int(c) for c in MakeCode)
PYTHON_BUILTINS = ["make_closure", "invoke_closure", "call_tir_dyn", "tensor_to_shape",
                   "shape_to_tensor"]


def builtin(name):
    return get_global_func(f"vm.builtin.{name}")


def test_all_builtins_are_registered_and_c_ones_are_c():
    import rvm.vm.machine  # noqa: F401  (registers the Python ones)
    for name in C_BUILTINS:
        func = get_global_func(name)
        assert not func.is_python, f"{name} should be implemented in C"
    for name in PYTHON_BUILTINS:
        assert builtin(name).is_python


def test_argument_counts_are_checked_before_a_c_builtin_runs():
    with pytest.raises(TypeError, match=r"^vm.builtin.copy takes 1 argument\(s\), got 2$"):
        builtin("copy")(1, 2)
    with pytest.raises(TypeError, match=r"^vm.builtin.check_tensor_info takes 2 to 4 arguments, "
                                        r"got 1$"):
        builtin("check_tensor_info")(1)
    with pytest.raises(TypeError, match=r"^vm.builtin.match_shape takes at least 3 argument"):
        builtin("match_shape")(1, None)


def test_match_shape_and_make_shape_directly():
    heap = empty((3,), "int64")
    x = array(np.zeros((1, 4, 5), "float32"))
    builtin("match_shape")(x, heap, 3, MATCH_EQUAL_IMM, 1, MATCH_STORE, 0, MATCH_STORE, 2,
                           "main: parameter 'x'")
    builtin("match_shape")(ShapeTuple((4, 7)), heap, 2, MATCH_EQUAL_HEAP, 0, MATCH_NO_OP, 0,
                           "main: parameter 's'")
    assert builtin("make_shape")(heap, 3, MAKE_LOAD, 2, MAKE_IMM, 9, MAKE_LOAD, 0) == (5, 9, 4)
    with pytest.raises(ValueError, match=r"main: parameter 'w': dimension 0 expected 4 \(bound "
                                         r"by an earlier match\), got 3"):
        builtin("match_shape")(ShapeTuple((3,)), heap, 1, MATCH_EQUAL_HEAP, 0,
                               "main: parameter 'w'")
    with pytest.raises(ValueError, match=r"main: parameter 'x': dimension 0 expected 2, got 1"):
        builtin("match_shape")(x, heap, 3, MATCH_EQUAL_IMM, 2, MATCH_NO_OP, 0, MATCH_NO_OP, 0,
                               "main: parameter 'x'")
    with pytest.raises(ValueError, match=r"^f: expected a tensor of rank 2, got rank 3 \(shape "
                                         r"\[1, 4, 5\]\)$"):
        builtin("match_shape")(x, heap, 2, MATCH_NO_OP, 0, MATCH_NO_OP, 0, "f")
    with pytest.raises(ValueError, match=r"^make_shape: shape heap slot 5 out of range \(size 3\)"):
        builtin("make_shape")(heap, 1, MAKE_LOAD, 5)
    with pytest.raises(ValueError, match=r"^make_shape: 2 dimensions need 4 codes, got 2$"):
        builtin("make_shape")(heap, 2, MAKE_IMM, 1)
    with pytest.raises(ValueError, match=r"^g: unknown match_shape kind 7$"):
        builtin("match_shape")(x, heap, 3, 7, 0, MATCH_NO_OP, 0, MATCH_NO_OP, 0, "g")
    with pytest.raises(TypeError, match=r"^h: the shape heap must be a 1-d int64 tensor, got "
                                        r"float32\[1, 4, 5\]$"):
        builtin("match_shape")(x, x, 3, MATCH_STORE, 0, MATCH_NO_OP, 0, MATCH_NO_OP, 0, "h")


def _shape_program():
    """main(x: Tensor((n, 2), f32), y: Tensor((n,), f32)) -> shape (n * 1, 2) via the heap."""
    ib = ExecBuilder()
    with ib.function("main", num_inputs=2, param_names=["x", "y"]):
        ib.emit_call("vm.builtin.alloc_shape_heap", args=[ib.vm_state(), 1], dst=ib.r(2))
        ib.emit_call("vm.builtin.check_tensor_info",
                     args=[ib.r(0), 2, ib.c(ib.convert_constant(DataType("float32"))),
                           "main: parameter 'x'"])
        ib.emit_call("vm.builtin.match_shape", args=[ib.r(0), ib.r(2), 2, MATCH_STORE, 0,
                                                     MATCH_EQUAL_IMM, 2, "main: parameter 'x'"])
        ib.emit_call("vm.builtin.match_shape", args=[ib.r(1), ib.r(2), 1, MATCH_EQUAL_HEAP, 0,
                                                     "main: parameter 'y'"])
        ib.emit_call("vm.builtin.make_shape", args=[ib.r(2), 2, MAKE_LOAD, 0, MAKE_IMM, 2],
                     dst=ib.r(3))
        ib.emit_call("vm.builtin.shape_of", args=[ib.r(0)], dst=ib.r(4))
        ib.emit_call("vm.builtin.check_shape_info", args=[ib.r(4), 2, "shape_of(x)"])
        ib.emit_call("vm.builtin.reshape", args=[ib.r(0), ib.r(3)], dst=ib.r(5))
        ib.emit_ret(ib.r(5))
    return ib.get()


def test_symbolic_shapes_through_the_vm():
    vm = VirtualMachine(_shape_program(), cpu())
    x = np.arange(6, dtype="float32").reshape(3, 2)
    out = vm["main"](x, np.zeros(3, "float32"))
    assert out.shape == (3, 2)
    np.testing.assert_array_equal(out.numpy(), x)
    with pytest.raises(ValueError, match="main: parameter 'y': dimension 0 expected 3"):
        vm["main"](x, np.zeros(4, "float32"))
    with pytest.raises(ValueError, match="main: parameter 'x': expected dtype float32, got "
                                         r"float64\[3, 2\]"):
        vm["main"](x.astype("float64"), np.zeros(3, "float32"))
    with pytest.raises(ValueError, match="main: parameter 'x': expected a Tensor of rank 2, "
                                         "got rank 1"):
        vm["main"](np.zeros(3, "float32"), np.zeros(3, "float32"))
    with pytest.raises(TypeError, match="main: parameter 'x': expected a Tensor, got int"):
        vm["main"](1, np.zeros(3, "float32"))


def test_checks_and_values():
    with pytest.raises(TypeError, match="p: expected a Shape, got int"):
        builtin("check_shape_info")(3, 1, "p")
    with pytest.raises(ValueError, match=r"expected a Shape of 2 dimensions, got \[1\]"):
        builtin("check_shape_info")(ShapeTuple((1,)), 2, "p")
    with pytest.raises(ValueError, match="expected a Tuple of 3 fields, got 2"):
        builtin("check_tuple_info")(Array([1, 2]), 3, "t")
    with pytest.raises(TypeError, match="^check_tuple_info: expected a Tuple, got ShapeTuple$"):
        builtin("check_tuple_info")(ShapeTuple((1,)), 1)
    builtin("check_tensor_info")(array(np.zeros(2)), -1, None, "any rank, any dtype")
    builtin("check_tensor_info")(array(np.zeros(2)), 1, "float64")
    with pytest.raises(ValueError, match=r"^check_tensor_info: expected dtype int8, got "
                                         r"float64\[2\]$"):
        builtin("check_tensor_info")(array(np.zeros(2)), 1, "int8")
    assert builtin("null_value")() is None
    tensor = array(np.ones(1))
    assert builtin("copy")(tensor).handle == tensor.handle
    assert builtin("read_if_cond")(array(np.array(False))) is False
    assert builtin("read_if_cond")(array(np.array([3], "int32"))) is True
    assert builtin("read_if_cond")(array(np.array(0.5, "float16"))) is True
    assert builtin("read_if_cond")(0) is False
    with pytest.raises(ValueError, match=r"scalar tensor, got float64\[2\]"):
        builtin("read_if_cond")(array(np.ones(2)))
    with pytest.raises(TypeError, match="bool, int or scalar tensor, got str"):
        builtin("read_if_cond")("yes")
    with pytest.raises(IndexError, match="index 2 out of range for a tuple of 2"):
        builtin("tuple_getitem")(Array([1, 2]), 2)
    assert builtin("tuple_getitem")(ShapeTuple((7, 8)), -1) == 8
    with pytest.raises(ValueError, match=r"cannot view float64\[4\] \(4 elements\) as shape "
                                         r"\[3\]"):
        builtin("reshape")(array(np.ones(4)), ShapeTuple((3,)))
    assert builtin("make_closure")(lambda a, b: a - b, 10)(3) == 7
    assert builtin("call_tir_dyn")(lambda *a: a, "x", ShapeTuple((4, 5))) == ("x", 4, 5)
    assert builtin("tensor_to_shape")(array(np.array([2, 3], "int64"))) == (2, 3)
    with pytest.raises(TypeError, match="1-d integer tensor"):
        builtin("tensor_to_shape")(array(np.ones(2)))


def test_scalar_checks_and_matches():
    check = builtin("check_prim_value_info")
    check(3, DataType("int64"), "n")
    check(True, DataType("bool"))
    check(2.5, DataType("float32"))
    check(2, DataType("float16"))
    check(2.5, "", "any scalar")
    with pytest.raises(TypeError, match=r"^f: parameter 'n': expected a value of dtype int64, "
                                        r"got float$"):
        check(2.5, DataType("int64"), "f: parameter 'n'")
    with pytest.raises(TypeError, match="^check_prim_value_info: expected a value of dtype "
                                        "int64, got bool$"):
        check(True, DataType("int64"))
    with pytest.raises(TypeError, match="expected a value of dtype float32, got NDArray"):
        check(array(np.ones(1, "float32")), DataType("float32"), "x")
    with pytest.raises(TypeError, match="expected a value of dtype bool, int or float, got str"):
        check("1", "", "x")
    with pytest.raises(ValueError, match="^k: 300 does not fit in uint8$"):
        check(300, DataType("uint8"), "k")
    with pytest.raises(ValueError, match="^k: -129 does not fit in int8$"):
        check(-129, DataType("int8"), "k")
    heap = empty((2,), "int64")
    match = builtin("match_prim_value")
    match(7, heap, MATCH_STORE, 1, "k")
    match(7, heap, MATCH_EQUAL_HEAP, 1, "k")
    match(4, None, MATCH_EQUAL_IMM, 4)
    with pytest.raises(ValueError, match="^k: expected the value 7, got 8$"):
        match(8, heap, MATCH_EQUAL_HEAP, 1, "k")
    with pytest.raises(TypeError, match="^match_prim_value: expected an integer, got float$"):
        match(8.0, heap, MATCH_STORE, 0)
    with pytest.raises(ValueError, match=r"^k: shape heap slot 2 out of range \(size 2\)$"):
        match(8, heap, MATCH_STORE, 2, "k")


def _apply_program():
    ib = ExecBuilder()
    with ib.function("apply", num_inputs=2, param_names=["f", "x"]):
        ib.emit_call("vm.builtin.check_func_info", args=[ib.r(0), "apply: parameter 'f'"])
        ib.emit_call("vm.builtin.invoke_closure", args=[ib.vm_state(), ib.r(0), ib.r(1)],
                     dst=ib.r(2))
        ib.emit_ret(ib.r(2))
    with ib.function("double", num_inputs=1):
        ib.emit_call("vm.builtin.make_tuple", args=[ib.r(0), ib.r(0)], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    with ib.function("main", num_inputs=1):
        ib.emit_call("apply", args=[ib.f("double"), ib.r(0)], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    return ib.get()


def test_check_func_info():
    check = builtin("check_func_info")
    check(len)
    check(builtin("copy"), "f")
    with pytest.raises(TypeError, match="^f: expected a function, got int$"):
        check(3, "f")
    with pytest.raises(TypeError, match="^check_func_info: expected a function, got NDArray$"):
        check(array(np.ones(1)))
    vm = VirtualMachine(_apply_program(), cpu())
    assert tuple(vm["main"](4)) == (4, 4)                   # a VM closure
    assert vm["apply"](lambda x: x + 1, 4) == 5              # any callable
    with pytest.raises(TypeError, match="^apply: parameter 'f': expected a function, got str"):
        vm["apply"]("f", 4)


def _failing_calls():
    """One program per failing builtin call: (name, builtin, args)."""
    f32 = DataType("float32")
    return [
        ("tensor_info", "check_tensor_info", [np.zeros(3, "int32"), 1, f32, "x"]),
        ("shape_info", "check_shape_info", [np.zeros(3, "int32"), 1, "s"]),
        ("tuple_index", "tuple_getitem", [Array([1]), 4]),
        ("reshape", "reshape", [np.zeros(3, "int32"), ShapeTuple((2,))]),
        ("condition", "read_if_cond", ["no"]),
        ("shape_of", "shape_of", [5]),
        ("func_info", "check_func_info", [1.5, "f"]),
        ("prim_value", "check_prim_value_info", [1.5, DataType("int32"), "p"]),
    ]


def test_both_engines_raise_the_same_errors():
    cases = _failing_calls()
    ib = ExecBuilder()
    for name, callee, args in cases:
        with ib.function(name, num_inputs=len(args)):
            ib.emit_call(f"vm.builtin.{callee}", args=[ib.r(i) for i in range(len(args))],
                         dst=ib.r(len(args)))
            ib.emit_ret(ib.r(len(args)))
    ex = ib.get()
    engines = [VirtualMachine(ex, cpu(), engine=e) for e in ("python", "native")]
    for name, callee, args in cases:
        texts = []
        for vm in engines:
            with pytest.raises(Exception) as info:
                vm[name](*args)
            texts.append((type(info.value), str(info.value), info.value.__notes__))
        assert texts[0] == texts[1], name
        direct = pytest.raises(Exception, builtin(callee), *args)
        assert (type(direct.value), str(direct.value)) == texts[0][:2]
