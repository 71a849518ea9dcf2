import pytest

from rvm import tir
from rvm.ir.expr import GlobalVar
from rvm.relax.block_builder import BlockBuilder
from rvm.relax.expr import ExternFunc, ShapeExpr, Tuple, Var
from rvm.relax.op.base import call_dps_packed, call_packed, call_pure_packed, call_tir
from rvm.relax.struct_info import ObjectStructInfo, TensorStructInfo, TupleStructInfo

T4 = TensorStructInfo((4,), "float32")


def tensor(name, shape):
    return Var(name, TensorStructInfo(shape, "float32"))


def test_call_tir_structure_and_inference():
    n = tir.Var("n", "int64")
    x = tensor("x", (4,))
    call = call_tir(GlobalVar("k"), [x], T4, tir_vars=[n])
    assert isinstance(call.args[1], Tuple) and isinstance(call.args[2], ShapeExpr)
    assert call.sinfo_args == (T4,)
    sinfo = BlockBuilder(check_global_vars=False).normalize(call).struct_info
    assert sinfo is T4
    multi = call_tir(GlobalVar("k"), x, [T4, T4])
    assert isinstance(multi.sinfo_args[0], TupleStructInfo)
    with pytest.raises(TypeError, match="GlobalVar"):
        call_tir("k", [x], T4)
    with pytest.raises(TypeError, match="out_sinfo"):
        call_tir(GlobalVar("k"), [x], (4,))


def test_call_tir_checks_callee_against_module():
    with pytest.raises(ValueError, match="relax.call_tir: function 'k' is not in the module"):
        BlockBuilder().normalize(call_tir(GlobalVar("k"), [tensor("x", (4,))], T4))


def test_call_tir_rejects_non_tensor_outputs():
    call = call_tir(GlobalVar("k"), [tensor("x", (4,))], ObjectStructInfo())
    with pytest.raises(ValueError, match="outputs must be tensors"):
        BlockBuilder(check_global_vars=False).normalize(call)


def test_call_dps_packed(infer):
    x = tensor("x", (4,))
    call = call_dps_packed("env.relu", (x,), T4)
    assert isinstance(call.args[0], ExternFunc) and call.args[0].global_symbol == "env.relu"
    assert infer(call) is T4
    with pytest.raises(TypeError, match="function name"):
        call_dps_packed(3, (x,), T4)


def test_call_packed_and_pure_packed(infer):
    x = tensor("x", (4,))
    p = Var("p", ObjectStructInfo())
    call = call_packed("env.f", x, p, sinfo_args=T4)
    assert isinstance(call.op, ExternFunc) and call.args == (x, p)
    assert infer(call) is T4
    assert isinstance(infer(call_packed("env.f", x)), ObjectStructInfo)
    pure = call_pure_packed("env.f", x, sinfo_args=[T4])
    assert pure.op.name == "relax.call_pure_packed" and pure.op.purity
    assert infer(pure) is T4
