import pytest

from rvm import tir
from rvm.relax.expr import Var
from rvm.relax.op import memory
from rvm.relax.struct_info import (
    ObjectStructInfo,
    ShapeStructInfo,
    TensorStructInfo,
    TupleStructInfo,
)


def test_allocation_struct_info_and_purity(infer):
    n = tir.Var("n", "int64")
    t = infer(memory.alloc_tensor((n, 4), "float32"))
    assert t.shape_values[0] is n and t.dtype == "float32"
    call = memory.alloc_storage((64,))
    assert not call.op.purity and isinstance(infer(call), ObjectStructInfo)
    storage = Var("s", ObjectStructInfo())
    inner = infer(memory.alloc_tensor_in_storage(storage, 0, (2, 8), "int8"))
    assert [d.value for d in inner.shape_values] == [2, 8] and inner.dtype == "int8"
    assert isinstance(infer(memory.kill_storage(storage)), TupleStructInfo)
    assert isinstance(infer(memory.kill_tensor(Var("t", t))), TupleStructInfo)


def test_alloc_with_shape_var_and_errors(infer):
    shape = Var("shape", ShapeStructInfo(ndim=3))
    assert infer(memory.alloc_tensor(shape, "float16")).ndim == 3
    bad = memory.alloc_tensor((2,), "float32")
    bad = type(bad)(bad.op, [bad.args[0], bad.args[0], bad.args[2]])
    with pytest.raises(ValueError, match="must be a DataTypeImm"):
        infer(bad)


def test_builtin_null_and_shape_of(infer):
    x = Var("x", TensorStructInfo((2, 3), "float32"))
    call = memory.call_builtin_with_ctx("vm.builtin.alloc", [x], TensorStructInfo(ndim=1))
    assert infer(call).ndim == 1 and not call.op.purity
    assert isinstance(infer(memory.null_value()), ObjectStructInfo)
    shape = infer(memory.shape_of(x))
    assert [d.value for d in shape.values] == [2, 3]
    assert infer(memory.shape_of(Var("y", TensorStructInfo(ndim=2)))).ndim == 2
