"""ToNonDataflow: dataflow blocks become binding blocks, DataflowVars become Vars."""
from rvm.ir.module import IRModule
from rvm.ir.base import assert_structural_equal
from rvm.relax.analysis.var_analysis import all_vars
from rvm.relax.binding import BindingBlock, DataflowBlock, SeqExpr, VarBinding
from rvm.relax.expr import DataflowVar, If, Var
from rvm.relax.function import Function
from rvm.relax.op.binary import add
from rvm.relax.struct_info import TensorStructInfo
from rvm.script import ir as I
from rvm.script import relax as R
from rvm.relax.transform.lowering_util import normalized
from rvm.relax.transform.to_non_dataflow import ToNonDataflow


def test_dataflow_block_becomes_binding_block():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((2, 3), "float32")):
            with R.dataflow():
                lv0 = R.add(x, x)
                lv1 = R.multiply(lv0, x)
                gv = R.nn.relu(lv1)
                R.output(gv)
            y = R.add(gv, gv)
            return y

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((2, 3), "float32")):
            lv0 = R.add(x, x)
            lv1 = R.multiply(lv0, x)
            gv = R.nn.relu(lv1)
            y = R.add(gv, gv)
            return y

    after = ToNonDataflow()(Before)
    assert_structural_equal(after, Expected)
    main = after["main"]
    assert not any(isinstance(b, DataflowBlock) for b in main.body.blocks)
    assert not any(isinstance(v, DataflowVar) for v in all_vars(main))


def test_dataflow_blocks_inside_if_branches():
    c = Var("c", TensorStructInfo((), "bool"))
    x = Var("x", TensorStructInfo((2,), "float32"))
    a = DataflowVar("a", x.struct_info)
    b = Var("b", x.struct_info)
    branch = SeqExpr([DataflowBlock([VarBinding(a, normalized(add(x, x))), VarBinding(b, a)])], b)
    r = Var("r", x.struct_info)
    body = SeqExpr([BindingBlock([VarBinding(r, normalized(If(c, branch, x)))])], r)
    mod = IRModule({"main": Function([c, x], body)})
    main = ToNonDataflow()(mod)["main"]
    assert not any(isinstance(v, DataflowVar) for v in all_vars(main))
    true_branch = main.body.blocks[0].bindings[0].value.true_branch
    assert [type(blk).__name__ for blk in true_branch.blocks] == ["BindingBlock"]
    assert [bd.var.name_hint for bd in true_branch.blocks[0].bindings] == ["a", "b"]


def test_without_dataflow_the_module_is_unchanged():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((2, 3), "float32")):
            y = R.add(x, x)
            return y

    assert ToNonDataflow()(Before) is Before
