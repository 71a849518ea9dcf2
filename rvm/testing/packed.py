"""TVM's FFI test helpers ``echo`` and ``device_test``: values sent through the packed C
calling convention and back. They are the global functions ``testing.echo`` and
``testing.device_test``, as in TVM.

>>> import numpy as np
>>> echo(np.int64(7)), echo("s"), echo(None)
(7, 's', None)
"""
from rvm.runtime.device import Device
from rvm.runtime.packed_func import get_global_func, register_func

# C builtins that store a value in a runtime array and read it back: the round trip
# converts it to its C form (an RVMValue and its type code) and back.
_MAKE_TUPLE = get_global_func("vm.builtin.make_tuple")
_GET_ITEM = get_global_func("vm.builtin.tuple_getitem")


@register_func("testing.echo")
def echo(value):
    """``value`` after a round trip through C: what a C packed function receiving it and
    returning it hands back (numpy integers come back as int, floats as float)."""
    return _GET_ITEM(_MAKE_TUPLE(value), 0)


@register_func("testing.device_test")
def device_test(dev, device_type, device_id):
    """``dev`` through C, after checking it has ``device_type`` and ``device_id``."""
    dev = echo(dev)
    if not isinstance(dev, Device):
        raise TypeError(f"device_test: expected a Device, got {type(dev).__name__}")
    if (dev.device_type, dev.device_id) != (device_type, device_id):
        raise ValueError(f"device_test: {dev} has device_type {dev.device_type} and "
                         f"device_id {dev.device_id}, expected {device_type} and {device_id}")
    return dev
