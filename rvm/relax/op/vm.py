"""``relax.op.vm``: the VM's own allocation operators (``R.vm.alloc_storage``,
``R.vm.alloc_tensor``, ``R.vm.kill_object``), with TVM's parameter names so the script's
keyword forms parse.

>>> s = alloc_storage((24,), runtime_device_index=0, dtype="uint8")
>>> s.op.name, [type(a).__name__ for a in s.args]
('relax.vm.alloc_storage', ['ShapeExpr', 'PrimValue', 'DataTypeImm', 'StringImm'])
"""
from rvm.ir.expr import RelaxExpr
from rvm.relax.expr import Call, DataTypeImm, PrimValue, ShapeExpr, StringImm
from rvm.relax.op.builtin import check_scope, dtype_of, int_of
from rvm.relax.op.registry import Op


def _shape(value):
    return value if isinstance(value, RelaxExpr) else ShapeExpr(value)


def alloc_storage(size, runtime_device_index, dtype, storage_scope="global"):
    """A storage of ``size`` elements of ``dtype`` (a byte count with ``"uint8"``)."""
    who = "relax.vm.alloc_storage"
    return Call(Op.get(who), [_shape(size), PrimValue(int_of(runtime_device_index, who,
                                                             "runtime_device_index")),
                              DataTypeImm(dtype_of(dtype)),
                              StringImm(check_scope(storage_scope, who))])


def alloc_tensor(storage, offset, shape, dtype, runtime_device_index=0):
    """A tensor of ``shape`` and ``dtype`` at byte ``offset`` of ``storage`` (whose device,
    ``runtime_device_index``, is the CPU's, 0)."""
    who = "relax.vm.alloc_tensor"
    if int_of(runtime_device_index, who, "runtime_device_index") != 0:
        raise ValueError(f"{who}: runtime_device_index must be 0 (the CPU), got "
                         f"{runtime_device_index!r}")
    return Call(Op.get(who), [storage, PrimValue(int_of(offset, who, "offset")), _shape(shape),
                              DataTypeImm(dtype_of(dtype))])


def kill_object(obj):
    """Drops the VM register holding ``obj``."""
    return Call(Op.get("relax.vm.kill_object"), [obj])
