"""StaticPlanBlockMemory: intermediate tensors go to planned storages, reused once dead."""
from rvm import tir
from rvm.ir.module import IRModule
from rvm.ir.base import assert_structural_equal
from rvm.relax.expr import DataTypeImm, PrimValue, ShapeExpr, StringImm, Tuple, Var
from rvm.relax.struct_info import TensorStructInfo
from rvm.relax.transform.static_plan_block_memory import StaticPlanBlockMemory

from tests.relax.transform.builders import FunctionBuilder, kernel, op

F32 = TensorStructInfo((2, 4), "float32")


def _storage(fb, nbytes, dtype="float32"):
    return fb.let(op("relax.memory.alloc_storage", ShapeExpr([nbytes]), PrimValue(0),
                     StringImm("global"), DataTypeImm(dtype)), "storage")


def _tensor(fb, storage, shape, dtype="float32"):
    return fb.let(op("relax.memory.alloc_tensor", storage, PrimValue(0), ShapeExpr(shape),
                     DataTypeImm(dtype)), "alloc")


def _kill(fb, name, value):
    fb.let(op(f"relax.memory.{name}", value), "_")


def _run(func):
    return StaticPlanBlockMemory()(IRModule({"main": func}))["main"]


def test_chain_reuses_dead_storage_and_keeps_the_output_fresh():
    x = Var("x", F32)
    before = FunctionBuilder([x])
    a0 = before.alloc_tensor([2, 4], "float32")
    before.let(kernel("k", x, a0), "_")
    a1 = before.alloc_tensor([2, 4], "float32")
    before.let(kernel("k", a0, a1), "_")
    a2 = before.alloc_tensor([2, 4], "float32")
    before.let(kernel("k", a1, a2), "_")
    a3 = before.alloc_tensor([2, 4], "float32")
    before.let(kernel("k", a2, a3), "_")

    x = Var("x", F32)
    expected = FunctionBuilder([x])
    s0 = _storage(expected, 32)
    e0 = _tensor(expected, s0, [2, 4])
    expected.let(kernel("k", x, e0), "_")
    s1 = _storage(expected, 32)
    e1 = _tensor(expected, s1, [2, 4])
    expected.let(kernel("k", e0, e1), "_")
    _kill(expected, "kill_tensor", e0)
    e2 = _tensor(expected, s0, [2, 4])  # a0 is dead: its storage is reused
    expected.let(kernel("k", e1, e2), "_")
    _kill(expected, "kill_tensor", e1)
    e3 = expected.alloc_tensor([2, 4], "float32")  # the result: never from a reused storage
    expected.let(kernel("k", e2, e3), "_")
    _kill(expected, "kill_tensor", e2)
    _kill(expected, "kill_storage", s0)
    _kill(expected, "kill_storage", s1)
    assert_structural_equal(_run(before.finish(a3)), expected.finish(e3))


def test_a_larger_tensor_grows_a_free_storage_and_dtypes_do_not_mix():
    x = Var("x", F32)
    before = FunctionBuilder([x])
    a0 = before.alloc_tensor([2, 4], "float32")
    before.let(kernel("k", x, a0), "_")
    a1 = before.alloc_tensor([2, 4], "int32")
    before.let(kernel("k", a0, a1), "_")
    a2 = before.alloc_tensor([4, 4], "float32")
    before.let(kernel("k", a1, a2), "_")
    out = before.alloc_tensor([2, 4], "float32")
    before.let(kernel("k", a2, out), "_")
    after = _run(before.finish(out))
    bindings = after.body.blocks[0].bindings
    storages = [b for b in bindings if getattr(b.value, "op", None) is not None
                and getattr(b.value.op, "name", "") == "relax.memory.alloc_storage"]
    assert [s.value.args[0].values[0].value for s in storages] == [64, 32]
    assert [str(s.value.args[3].value) for s in storages] == ["float32", "int32"]
    tensors = [b.value for b in bindings if getattr(b.value.op, "name", "")
               == "relax.memory.alloc_tensor"]
    assert tensors[0].args[0] is tensors[2].args[0] is storages[0].var


def test_tensors_flowing_into_the_result_are_not_planned():
    x = Var("x", F32)
    before = FunctionBuilder([x])
    a0 = before.alloc_tensor([2, 4], "float32")
    before.let(kernel("k", x, a0), "_")
    alias = before.let(a0, "lv")
    tup = before.let(Tuple([alias, x]), "t")
    func = before.finish(tup)
    assert _run(func) is func


def test_symbolic_shapes_are_left_to_the_vm():
    n = tir.Var("n", "int64")
    x = Var("x", TensorStructInfo((n,), "float32"))
    before = FunctionBuilder([x])
    a0 = before.alloc_tensor([n], "float32")
    before.let(kernel("k", x, a0), "_")
    out = before.alloc_tensor([n], "float32")
    before.let(kernel("k", a0, out), "_")
    func = before.finish(out)
    assert _run(func) is func


def test_results_of_packed_calls_may_alias_their_arguments():
    from tests.relax.transform.builders import extern

    x = Var("x", F32)
    before = FunctionBuilder([x])
    a0 = before.alloc_tensor([2, 4], "float32")
    before.let(kernel("k", x, a0), "_")
    view = before.let(extern("vm.builtin.reshape", a0, ShapeExpr([8]),
                             sinfo=TensorStructInfo((8,), "float32")), "view")
    func = before.finish(view)
    assert _run(func) is func  # a0 escapes through the view
