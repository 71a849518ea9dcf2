"""Storage allocation: the pooled allocator reuses storage across calls; naive never does."""
import numpy as np
import pytest

from rvm.bytecode.builder import ExecBuilder
from rvm.runtime.container import ShapeTuple
from rvm.runtime.data_type import DataType
from rvm.runtime.device import cpu
from rvm.runtime.packed_func import get_global_func, register_func
from rvm.vm.machine import VirtualMachine


@register_func("test.vm.double_into", override=True)
def _double_into(x, out):
    np.multiply(np.from_dlpack(x), 2, out=np.from_dlpack(out))


def _planned_program():
    """main(x: f32[4]) -> f32[4]: a temporary and the output, both from alloc_storage."""
    ib = ExecBuilder()
    shape = ib.c(ib.convert_constant(ShapeTuple((4,))))
    f32 = ib.c(ib.convert_constant(DataType("float32")))
    with ib.function("main", num_inputs=1):
        ib.emit_call("vm.builtin.alloc_storage", args=[ib.vm_state(), shape, 0, f32],
                     dst=ib.r(1))
        ib.emit_call("vm.builtin.alloc_tensor", args=[ib.r(1), 0, shape, f32], dst=ib.r(2))
        ib.emit_call("test.vm.double_into", args=[ib.r(0), ib.r(2)])
        ib.emit_call("vm.builtin.alloc_storage", args=[ib.vm_state(), shape, 0, f32],
                     dst=ib.r(3))
        ib.emit_call("vm.builtin.alloc_tensor", args=[ib.r(3), 0, shape, f32], dst=ib.r(4))
        ib.emit_call("test.vm.double_into", args=[ib.r(2), ib.r(4)])
        ib.emit_ret(ib.r(4))
    return ib.get()


def test_pooled_allocates_only_on_the_first_call():
    vm = VirtualMachine(_planned_program(), cpu(), memory_cfg="pooled")
    x = np.arange(4, dtype="float32")
    for _ in range(100):
        np.testing.assert_array_equal(vm["main"](x).numpy(), x * 4)
    stats = vm.memory_stats()[0]
    assert stats["requests"] == 200
    assert stats["allocations"] == 2
    assert stats["reuses"] == 198


def test_live_outputs_are_never_handed_out_again():
    vm = VirtualMachine(_planned_program(), cpu())
    kept = [vm["main"](np.full(4, i, "float32")) for i in range(5)]
    for i, out in enumerate(kept):
        np.testing.assert_array_equal(out.numpy(), np.full(4, 4 * i))
    assert vm.memory_stats()[0]["allocations"] == 6   # one temporary + five live outputs
    view = kept[0].view((2, 2))
    del kept
    vm["main"](np.zeros(4, "float32"))
    np.testing.assert_array_equal(view.numpy(), np.zeros((2, 2)))   # still intact
    assert vm.memory_stats()[0]["allocations"] == 6


def test_naive_allocates_every_time():
    vm = VirtualMachine(_planned_program(), cpu(), memory_cfg="naive")
    for _ in range(10):
        vm["main"](np.ones(4, "float32"))
    assert vm.memory_stats()[0]["allocations"] == 20
    with pytest.raises(ValueError, match="memory_cfg must be one of"):
        VirtualMachine(_planned_program(), cpu(), memory_cfg="arena")


def _alloc(vm, nbytes):
    return get_global_func("vm.builtin.alloc_storage")(vm.state, nbytes)


def _view(storage, offset, shape):
    return get_global_func("vm.builtin.alloc_tensor")(storage, offset, ShapeTuple(shape),
                                                      DataType("float32"))


def test_storage_bounds_and_reuse():
    vm = VirtualMachine(_planned_program(), cpu())
    storage = _alloc(vm, 64)
    t = _view(storage, 48, (4,))
    assert t.shape == (4,) and t.dtype == "float32"
    with pytest.raises(ValueError, match=r"^alloc_tensor: float32\[5\] \(20 bytes\) at offset "
                                         "48 does not fit in a storage of 64 bytes$"):
        _view(storage, 48, (5,))
    with pytest.raises(ValueError, match=r"^alloc_tensor: negative dimension in shape \(-1,\)$"):
        _view(storage, 0, (-1,))
    with pytest.raises(TypeError, match="^alloc_tensor: expected a Storage, got NDArray$"):
        _view(t, 0, (1,))
    with pytest.raises(TypeError, match="^alloc_storage: expected the VM state as argument 1, "
                                        "got int$"):
        get_global_func("vm.builtin.alloc_storage")(0, 16)
    del storage, t
    _alloc(vm, 10)                                   # the free storage comes back
    assert vm.memory_stats()[0]["allocations"] == 1


def test_pool_reuses_freed_storage_among_many_live_ones():
    vm = VirtualMachine(_planned_program(), cpu())
    live = [_alloc(vm, 256) for _ in range(50)]       # kept alive, like collected outputs
    assert vm.memory_stats()[0]["allocations"] == 50
    freed = live[10:40]
    del live[10:40]
    del freed
    for _ in range(30):                                 # 30 requests, 30 free storages
        live.append(_alloc(vm, 256))
    # each request inspects at most 8 storages of its size, starting where the last stopped
    assert vm.memory_stats()[0]["allocations"] <= 50 + 30 // 8 + 1
    views = [_view(s, 0, (4,)) for s in live]
    assert all(v.shape == (4,) for v in views)


def test_tensor_views_keep_their_storage_busy():
    vm = VirtualMachine(_planned_program(), cpu())
    storage = _alloc(vm, 64)
    tensor = _view(storage, 0, (16,))
    del storage
    second = _alloc(vm, 64)  # the tensor still uses the first storage: a new one
    assert vm.memory_stats()[0]["allocations"] == 2
    del second
    del tensor
    _alloc(vm, 64)
    assert vm.memory_stats()[0]["allocations"] == 2
