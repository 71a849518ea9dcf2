"""``relax.op.builtin``: the allocation operator the lowering passes emit before the VM's own
ones (``R.builtin.alloc_tensor``), with TVM's parameter names so the script's keyword forms
(``R.builtin.alloc_tensor(shape, dtype="float32", runtime_device_index=0)``) parse.

>>> alloc_tensor((2, 3), "float32", 0).op.name
'relax.builtin.alloc_tensor'
"""
from rvm.relax.expr import DataTypeImm, PrimValue, StringImm
from rvm.relax.op.memory import alloc_tensor as _alloc_tensor
from rvm.tir.expr import IntImm


def alloc_tensor(shape, dtype, runtime_device_index=0, storage_scope="global"):
    """A new tensor of ``shape`` and ``dtype`` on device ``runtime_device_index`` (only the
    ``"global"`` storage scope exists)."""
    check_scope(storage_scope, "relax.builtin.alloc_tensor")
    return _alloc_tensor(shape, dtype_of(dtype),
                         int_of(runtime_device_index, "relax.builtin.alloc_tensor",
                                "runtime_device_index"))


def dtype_of(dtype):
    """A dtype given as a string, DataType or ``R.dtype(...)``."""
    return dtype.value if isinstance(dtype, DataTypeImm) else dtype


def int_of(value, who, what):
    """An int given as an int or ``R.prim_value(...)``."""
    if isinstance(value, PrimValue):
        value = value.value
    if isinstance(value, IntImm):
        value = value.value
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{who}: {what} must be an int, got {value!r}")
    return value


def check_scope(scope, who):
    """Only the "global" storage scope exists."""
    scope = scope.value if isinstance(scope, StringImm) else scope
    if scope != "global":
        raise ValueError(f"{who}: storage_scope must be \"global\", got {scope!r}")
    return scope
