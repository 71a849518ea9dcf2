"""VMBuiltinLower: memory and runtime operators become VM builtins."""
import pytest

from rvm import tir
from rvm.ir.module import IRModule
from rvm.ir.base import assert_structural_equal
from rvm.relax.expr import DataTypeImm, ExternFunc, PrimValue, ShapeExpr, StringImm, Tuple, Var
from rvm.relax.struct_info import ShapeStructInfo, TensorStructInfo
from rvm.relax.transform.vm_builtin_lower import VMBuiltinLower

from tests.relax.transform.builders import FunctionBuilder, kernel, op, vm_alloc_storage

F32 = TensorStructInfo((2, 4), "float32")


def _run(func):
    return VMBuiltinLower()(IRModule({"main": func}))["main"]


def test_builtin_alloc_tensor_becomes_vm_storage_and_tensor():
    x = Var("x", F32)
    before = FunctionBuilder([x])
    a0 = before.alloc_tensor([2, 4], "float32")
    before.let(kernel("k", x, a0), "_")

    x = Var("x", F32)
    expected = FunctionBuilder([x])
    storage = expected.let(vm_alloc_storage([32]), "alloc_storage")
    e0 = expected.let(op("relax.vm.alloc_tensor", storage, PrimValue(0), ShapeExpr([2, 4]),
                         DataTypeImm("float32")), "alloc")
    expected.let(op("relax.vm.kill_object", storage), "_")
    expected.let(kernel("k", x, e0), "_")
    assert_structural_equal(_run(before.finish(a0)), expected.finish(e0))


def test_symbolic_sizes_are_byte_expressions():
    n = tir.Var("n", "int64")
    x = Var("x", TensorStructInfo((n,), "float32"))
    before = FunctionBuilder([x])
    a0 = before.alloc_tensor([n, 3], "int64")
    size = _run(before.finish(a0)).body.blocks[0].bindings[0].value.args[0]
    assert str(size.values[0]) in ("n * T.int64(24)", "T.int64(24) * n")


def test_memory_ops_kills_and_packed_forms():
    x = Var("x", F32)
    shape_var = Var("s", ShapeStructInfo(ndim=2))
    before = FunctionBuilder([x, shape_var])
    storage = before.let(op("relax.memory.alloc_storage", ShapeExpr([64]), PrimValue(0),
                            StringImm("global"), DataTypeImm("float32")), "storage")
    t = before.let(op("relax.memory.alloc_tensor", storage, PrimValue(0), ShapeExpr([2, 4]),
                      DataTypeImm("float32")), "t")
    before.let(op("relax.memory.kill_tensor", t), "_")
    before.let(op("relax.memory.kill_storage", storage), "_")
    shp = before.let(op("relax.shape_of", x), "shp")
    pure = before.let(op("relax.call_pure_packed", ExternFunc("env.id"), x,
                         sinfo_args=[F32]), "pure")
    dyn = before.let(op("relax.vm.call_tir_dyn", ExternFunc("kernel"),
                        Tuple([x, ShapeExpr([3])])), "dyn")
    unknown = before.alloc_tensor([2, 4], "float32")
    unknown_shape = before.let(op("relax.builtin.alloc_tensor", shape_var,
                                  DataTypeImm("float32"), PrimValue(0)), "u")
    after = _run(before.finish(Tuple([shp, pure, dyn, unknown, unknown_shape])))
    values = [b.value for b in after.body.blocks[0].bindings]
    names = [getattr(v.op, "name", None) or getattr(v.op, "global_symbol", None)
             for v in values]
    assert names == ["relax.vm.alloc_storage", "relax.vm.alloc_tensor", "relax.vm.kill_object",
                     "relax.vm.kill_object", "vm.builtin.shape_of", "env.id",
                     "vm.builtin.call_tir_dyn", "relax.vm.alloc_storage",
                     "relax.vm.alloc_tensor", "relax.vm.kill_object", "relax.vm.alloc_storage",
                     "relax.vm.alloc_tensor", "relax.vm.kill_object"]
    assert str(values[0].args[2].value) == "uint8"  # sizes are bytes
    assert values[6].args[1] is x and isinstance(values[6].args[2], ShapeExpr)
    # a tensor of unknown static shape: the storage is sized by the shape itself
    assert values[10].args[0] is shape_var and str(values[10].args[2].value) == "float32"
    assert values[5].struct_info_ is not None and values[4].struct_info_.ndim == 2


def test_unlowered_operator_is_an_error_naming_it():
    x = Var("x", F32)
    fb = FunctionBuilder([x])
    y = fb.let(op("relax.add", x, x), "y")
    func = fb.finish(y, attrs={"global_symbol": "main"})
    with pytest.raises(ValueError, match="main: operator 'relax.add' has no VM lowering"):
        _run(func)


def test_reshape_becomes_the_view_builtin():
    x = Var("x", F32)
    before = FunctionBuilder([x])
    y = before.let(op("relax.reshape", x, ShapeExpr([8])), "y")
    after = _run(before.finish(y))
    value = after.body.blocks[0].bindings[0].value
    assert isinstance(value.op, ExternFunc) and value.op.global_symbol == "vm.builtin.reshape"
    assert value.args[0] is x and [d.value for d in value.args[1].values] == [8]
    assert value.struct_info_.shape_values[0].value == 8
