"""Low-level operators that lowering passes introduce: allocation, builtins, shape queries.

They appear after ``call_tir`` is rewritten into explicit allocation and
kernel calls (CallTIRRewrite, StaticPlanBlockMemory, VMShapeLower) and map
one-to-one onto VM builtins. Allocation and freeing are impure.

>>> from rvm.relax.expr import Var
>>> from rvm.relax.struct_info import TensorStructInfo
>>> shape_of(Var("x", TensorStructInfo((2, 3), "float32"))).op.name
'relax.shape_of'
"""
from rvm.ir.expr import RelaxExpr
from rvm.relax.expr import Call, DataTypeImm, ExternFunc, PrimValue, ShapeExpr, StringImm, Tuple
from rvm.relax.op.infer_util import check_arity, tensor_arg
from rvm.relax.op.registry import Op, register_op
from rvm.relax.struct_info import (
    ObjectStructInfo,
    ShapeStructInfo,
    StructInfo,
    TensorStructInfo,
    TupleStructInfo,
)


def _shape_arg(value):
    return value if isinstance(value, RelaxExpr) else ShapeExpr(value)


def _tensor_of(shape_index, dtype_index, op_name):
    def infer(call, ctx):
        shape = call.args[shape_index]
        if not isinstance(shape.struct_info_, ShapeStructInfo):
            raise ValueError(f"{op_name}: argument {shape_index} must be a shape, got "
                             f"{shape.struct_info_!r}")
        dtype = call.args[dtype_index]
        if not isinstance(dtype, DataTypeImm):
            raise ValueError(f"{op_name}: argument {dtype_index} must be a DataTypeImm, got "
                             f"{type(dtype).__name__}")
        if isinstance(shape, ShapeExpr):
            return TensorStructInfo(shape, dtype.value)
        return TensorStructInfo(None, dtype.value, shape.struct_info_.ndim)

    return infer


def _void(call, ctx):
    return TupleStructInfo([])


def _object(call, ctx):
    return ObjectStructInfo()


register_op("relax.builtin.alloc_tensor", _tensor_of(0, 1, "relax.builtin.alloc_tensor"),
            purity=False, num_inputs=3, description="allocate a tensor (shape, dtype, device)")
register_op("relax.memory.alloc_storage", _object, purity=False, num_inputs=4,
            description="allocate storage (size, device index, scope, dtype)")
register_op("relax.memory.alloc_tensor", _tensor_of(2, 3, "relax.memory.alloc_tensor"),
            purity=False, num_inputs=4, description="a tensor in a storage (offset, shape, dtype)")
register_op("relax.memory.kill_storage", _void, purity=False, num_inputs=1,
            description="release a storage")
register_op("relax.memory.kill_tensor", _void, purity=False, num_inputs=1,
            description="release a tensor")
register_op("relax.vm.alloc_storage", _object, purity=False, num_inputs=4,
            description="VM storage allocation (size, device index, dtype, scope)")
register_op("relax.vm.alloc_tensor", _tensor_of(2, 3, "relax.vm.alloc_tensor"), purity=False,
            num_inputs=4, description="VM tensor in a storage (offset, shape, dtype)")
register_op("relax.vm.kill_object", _void, purity=False, num_inputs=1,
            description="drop a VM register's object")
register_op("relax.vm.call_tir_dyn", _void, purity=False, num_inputs=2,
            description="call a kernel with outputs and symbolic shapes as arguments")
register_op("relax.null_value", _object, num_inputs=0, description="the null object")


def _infer_builtin(call, ctx):
    if len(call.args) != 2 or not isinstance(call.args[0], ExternFunc):
        raise ValueError("relax.call_builtin_with_ctx expects (ExternFunc, args tuple)")
    return call.sinfo_args[0] if call.sinfo_args else ObjectStructInfo()


register_op("relax.call_builtin_with_ctx", _infer_builtin, purity=False,
            description="call a VM builtin that also receives the VM context")


def _infer_shape_of(call, ctx):
    check_arity(call, 1, "relax.shape_of")
    sinfo = tensor_arg(call, 0, "relax.shape_of")
    if sinfo.shape_values is not None:
        return ShapeStructInfo(sinfo.shape_values)
    return ShapeStructInfo(ndim=sinfo.ndim)


register_op("relax.shape_of", _infer_shape_of, description="the shape of a tensor")


def alloc_tensor(shape, dtype, runtime_device_index=0):
    """A new tensor of ``shape`` and ``dtype`` (``relax.builtin.alloc_tensor``)."""
    return Call(Op.get("relax.builtin.alloc_tensor"),
                [_shape_arg(shape), DataTypeImm(dtype),
                 PrimValue(runtime_device_index)])


def alloc_storage(size, virtual_device_index=0, storage_scope="global", dtype="uint8"):
    """A storage of ``size`` (a shape of one dimension: bytes) (``relax.memory.alloc_storage``)."""
    return Call(Op.get("relax.memory.alloc_storage"),
                [_shape_arg(size), PrimValue(virtual_device_index),
                 StringImm(storage_scope), DataTypeImm(dtype)])


def alloc_tensor_in_storage(storage, offset, shape, dtype):
    """A tensor placed at byte ``offset`` of ``storage`` (``relax.memory.alloc_tensor``)."""
    return Call(Op.get("relax.memory.alloc_tensor"),
                [storage, PrimValue(offset), _shape_arg(shape),
                 DataTypeImm(dtype)])


def kill_storage(storage):
    """Releases ``storage`` (``relax.memory.kill_storage``)."""
    return Call(Op.get("relax.memory.kill_storage"), [storage])


def kill_tensor(tensor):
    """Releases ``tensor`` (``relax.memory.kill_tensor``)."""
    return Call(Op.get("relax.memory.kill_tensor"), [tensor])


def call_builtin_with_ctx(func, args, sinfo_args=None):
    """Calls the VM builtin ``func`` with the VM context prepended to ``args``."""
    if isinstance(func, str):
        func = ExternFunc(func)
    if not isinstance(args, RelaxExpr):
        args = Tuple(args)
    if isinstance(sinfo_args, StructInfo):
        sinfo_args = [sinfo_args]
    return Call(Op.get("relax.call_builtin_with_ctx"), [func, args], sinfo_args=sinfo_args)


def null_value():
    """The null object (``relax.null_value``)."""
    return Call(Op.get("relax.null_value"), [])


def shape_of(x):
    """The shape of tensor ``x`` as a shape value (``relax.shape_of``)."""
    return Call(Op.get("relax.shape_of"), [x])
