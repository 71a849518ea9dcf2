"""vm.builtin.*: shape matching on the shape heap, checks, reshape, conditions, tuples."""
import numpy as np
import pytest

from rvm.bytecode.builder import ExecBuilder
from rvm.runtime.container import Array, ShapeTuple
from rvm.runtime.data_type import DataType
from rvm.runtime.device import cpu
from rvm.runtime.ndarray import array, empty
from rvm.runtime.packed_func import get_global_func
from rvm.vm.builtins_shape import (
    MAKE_IMM, MAKE_LOAD, MATCH_EQUAL_HEAP, MATCH_EQUAL_IMM, MATCH_NO_OP, MATCH_STORE,
)
from rvm.vm.machine import VirtualMachine

NAMES = ["alloc_storage", "alloc_tensor", "null_value", "check_tensor_info", "check_shape_info",
         "check_tuple_info", "match_shape", "make_shape", "shape_of", "reshape", "copy",
         "read_if_cond", "make_tuple", "tuple_getitem", "make_closure", "invoke_closure",
         "alloc_shape_heap", "call_tir_dyn", "tensor_to_shape"]


def builtin(name):
    return get_global_func(f"vm.builtin.{name}")


def test_all_builtins_are_registered():
    import rvm.vm.machine  # noqa: F401  (registers them)
    for name in NAMES:
        assert builtin(name) is not None


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
    with pytest.raises(ValueError, match="expected a tensor of rank 2, got rank 3"):
        builtin("match_shape")(x, heap, 2, MATCH_NO_OP, 0, MATCH_NO_OP, 0, "f")
    with pytest.raises(ValueError, match="slot 5 out of range"):
        builtin("make_shape")(heap, 1, MAKE_LOAD, 5)


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
    with pytest.raises(ValueError, match="expected a Shape of 2 dimensions"):
        builtin("check_shape_info")(ShapeTuple((1,)), 2, "p")
    with pytest.raises(ValueError, match="expected a Tuple of 3 fields, got 2"):
        builtin("check_tuple_info")(Array([1, 2]), 3, "t")
    builtin("check_tensor_info")(array(np.zeros(2)), -1, None, "any rank, any dtype")
    assert builtin("null_value")() is None
    tensor = array(np.ones(1))
    assert builtin("copy")(tensor) is tensor
    assert builtin("read_if_cond")(array(np.array(False))) is False
    assert builtin("read_if_cond")(array(np.array([3], "int32"))) is True
    assert builtin("read_if_cond")(0) is False
    with pytest.raises(ValueError, match="scalar tensor"):
        builtin("read_if_cond")(array(np.ones(2)))
    with pytest.raises(IndexError, match="index 2 out of range for a tuple of 2"):
        builtin("tuple_getitem")(Array([1, 2]), 2)
    with pytest.raises(ValueError, match="cannot view float64"):
        builtin("reshape")(array(np.ones(4)), ShapeTuple((3,)))
    assert builtin("make_closure")(lambda a, b: a - b, 10)(3) == 7
    assert builtin("call_tir_dyn")(lambda *a: a, "x", ShapeTuple((4, 5))) == ("x", 4, 5)
    assert builtin("tensor_to_shape")(array(np.array([2, 3], "int64"))) == (2, 3)
    with pytest.raises(TypeError, match="1-d integer tensor"):
        builtin("tensor_to_shape")(array(np.ones(2)))
