from rvm.ir.expr import GlobalVar
from rvm.relax.analysis.var_analysis import all_global_vars, all_vars, bound_vars, free_vars
from rvm.relax.block_builder import BlockBuilder
from rvm.relax.expr import Var
from rvm.relax.op.base import call_tir
from rvm.relax.op.binary import add
from rvm.relax.struct_info import TensorStructInfo

T = TensorStructInfo((4,), "float32")


def _function():
    x, w = Var("x", T), Var("w", T)
    bb = BlockBuilder(check_global_vars=False)
    with bb.function("main", params=[x]):
        with bb.dataflow():
            a = bb.emit(add(x, w))
            b = bb.emit(call_tir(GlobalVar("k"), [a], T))
            out = bb.emit_output(b)
        bb.emit_func_output(out)
    return bb.get()["main"], x, w


def test_free_and_bound():
    func, x, w = _function()
    assert free_vars(func) == [w]
    assert [v.name_hint for v in bound_vars(func)] == ["x", "lv", "lv1", "gv"]
    assert bound_vars(func)[0] is x
    assert len(all_vars(func)) == 5
    assert free_vars(func.body) == [x, w]


def test_global_vars():
    func, _, _ = _function()
    assert [g.name_hint for g in all_global_vars(func)] == ["k"]
