"""Tensors made over storage or over another tensor never reach past the bytes that memory
owns, counted in bytes (element count x dtype size, overflow-checked), never in elements.
Each test runs once per engine (the builtins are shared C code; the engines must agree)."""
import numpy as np
import pytest

import rvm
from rvm.bytecode.builder import ExecBuilder
from rvm.runtime.container import ShapeTuple
from rvm.runtime.data_type import DataType
from rvm.runtime.ndarray import array, empty
from rvm.runtime.packed_func import register_func
from rvm.vm.machine import VirtualMachine

SEEN = []
register_func("test.vm.extents.peek", lambda t: SEEN.append((str(t.dtype), t.nbytes)),
              override=True)


def _alloc_and_peek(storage_shape, storage_dtype, shape, dtype, offset=0):
    """main(): a storage of storage_shape x storage_dtype, a tensor of shape x dtype at
    ``offset`` in it, handed to a Python callee."""
    ib = ExecBuilder()
    c = lambda v: ib.c(ib.convert_constant(v))  # noqa: E731
    with ib.function("main", num_inputs=0):
        ib.emit_call("vm.builtin.alloc_storage",
                     args=[ib.vm_state(), c(ShapeTuple(storage_shape)), 0,
                           c(DataType(storage_dtype))], dst=ib.r(0))
        ib.emit_call("vm.builtin.alloc_tensor",
                     args=[ib.r(0), offset, c(ShapeTuple(shape)), c(DataType(dtype))],
                     dst=ib.r(1))
        ib.emit_call("test.vm.extents.peek", args=[ib.r(1)])
        ib.emit_ret(ib.r(1))
    return VirtualMachine(ib.get(), rvm.cpu())["main"]


def test_a_float64_tensor_over_float32_storage_of_the_same_count_is_refused():
    SEEN.clear()
    with pytest.raises(ValueError, match=r"alloc_tensor: float64\[64\] \(512 bytes\) at offset "
                                         r"0 does not fit in a storage of 256 bytes"):
        _alloc_and_peek((64,), "float32", (64,), "float64")()
    assert SEEN == []


def test_a_tensor_with_the_same_bytes_fits():
    SEEN.clear()
    _alloc_and_peek((64,), "float32", (32,), "float64")()
    assert SEEN == [("float64", 256)]


def test_an_offset_counts_in_bytes():
    SEEN.clear()
    with pytest.raises(ValueError, match=r"at offset 8 does not fit"):
        _alloc_and_peek((64,), "float32", (32,), "float64", offset=8)()
    assert SEEN == []


def test_a_shape_whose_byte_size_overflows_is_refused():
    with pytest.raises(ValueError, match=r"alloc_tensor: float32\[2147483648, 2147483648\]"):
        _alloc_and_peek((8,), "float32", (1 << 31, 1 << 31), "float32")()


def test_a_shape_heap_whose_byte_size_overflows_is_refused():
    ib = ExecBuilder()
    with ib.function("main", num_inputs=0):
        ib.emit_call("vm.builtin.alloc_shape_heap",
                     args=[ib.vm_state(), ib.c(ib.convert_constant(1 << 61))], dst=ib.r(0))
        ib.emit_ret(ib.r(0))
    with pytest.raises(ValueError, match="byte size overflows int64"):
        VirtualMachine(ib.get(), rvm.cpu())["main"]()


def test_reshape_keeps_the_bytes():
    ib = ExecBuilder()
    with ib.function("main", num_inputs=1):
        ib.emit_call("vm.builtin.reshape", args=[ib.r(0), ib.c(ib.convert_constant(
            ShapeTuple((2, 1 << 62))))], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    with pytest.raises(ValueError, match=r"reshape: cannot view float32\[8\]"):
        VirtualMachine(ib.get(), rvm.cpu())["main"](array(np.zeros(8, "float32")))


def test_views_of_a_tensor_stay_inside_it():
    a = array(np.arange(4, dtype="float32"))
    assert a.view((2,), "float64").numpy().nbytes == 16
    with pytest.raises(ValueError, match="does not fit in a tensor of 16 bytes"):
        a.view((4,), "float64")
    with pytest.raises(ValueError, match="does not fit in a tensor of 16 bytes"):
        a.view((1,), "float64", byte_offset=12)
    with pytest.raises(ValueError, match="its byte size overflows int64"):
        a.view((1 << 61, 8))
    inner = a.view((2,), "float32", byte_offset=8)
    with pytest.raises(ValueError, match="does not fit in a tensor of 8 bytes"):
        inner.view((4,))


def test_a_tensor_whose_byte_size_overflows_is_never_allocated():
    with pytest.raises(ValueError, match="byte size overflows int64"):
        empty((1 << 62, 4), "float32")
