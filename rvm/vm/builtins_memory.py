"""Memory builtins: storages from the VM's allocators and tensors inside them.

``vm.builtin.alloc_storage(vm, size, device_index, dtype_hint[, mem_scope])``
returns a Storage of ``prod(size) * dtype_hint.itemsize`` bytes (``size`` is a
shape or an int); ``vm.builtin.alloc_tensor(storage, offset, shape, dtype)``
returns a tensor at byte ``offset`` of it.
"""
import math
import operator

from rvm.runtime.data_type import DataType
from rvm.vm.allocator import Storage
from rvm.vm.builtin_registry import builtin


@builtin("vm.builtin.alloc_storage")
def alloc_storage(vm, size, device_index=0, dtype_hint="uint8", mem_scope="global"):
    """A Storage from the allocator of ``vm.devices[device_index]``."""
    if isinstance(size, int):
        nelem = size
    else:
        nelem = math.prod(operator.index(d) for d in size)
    if nelem < 0:
        raise ValueError(f"alloc_storage: size must be >= 0, got {nelem}")
    allocators = vm.allocators
    if not 0 <= device_index < len(allocators):
        raise ValueError(f"alloc_storage: device_index {device_index} out of range; the VM "
                         f"has {len(allocators)} devices")
    return allocators[device_index].alloc(nelem * DataType(dtype_hint).itemsize)


@builtin("vm.builtin.alloc_tensor")
def alloc_tensor(storage, offset, shape, dtype):
    """A tensor of ``shape``/``dtype`` at byte ``offset`` of ``storage``."""
    if not isinstance(storage, Storage):
        raise TypeError(f"alloc_tensor: expected a Storage, got {type(storage).__name__}")
    return storage.alloc_tensor(offset, shape, dtype)
