import numpy as np

from rvm import tir
from rvm.ir.base import structural_equal
from rvm.relax.analysis.well_formed import well_formed
from rvm.relax.binding import DataflowBlock, MatchCast
from rvm.relax.block_builder import BlockBuilder
from rvm.relax.expr import Call, Constant, DataflowVar, Tuple, Var, const
from rvm.relax.expr_functor import ExprMutator, ExprVisitor
from rvm.relax.op import binary, nn
from rvm.relax.op.registry import Op
from rvm.relax.struct_info import TensorStructInfo


def _module():
    x = Var("x", TensorStructInfo((2, 3), "float32"))
    w = Var("w", TensorStructInfo((2, 3), "float32"))
    bb = BlockBuilder()
    with bb.function("main", params=[x, w]):
        with bb.dataflow():
            a = bb.emit(binary.add(x, w))
            b = bb.emit(nn.relu(a))
            c = bb.emit(Tuple([a, b]))
            out = bb.emit_output(c)
        bb.emit_func_output(out)
    return bb.get()


class _OpNames(ExprVisitor):
    def __init__(self):
        self.names = []
        self.defs = []

    def visit_call_(self, call):
        if isinstance(call.op, Op):
            self.names.append(call.op.name)
        super().visit_call_(call)

    def visit_var_def(self, var):
        self.defs.append(var.name_hint)


def test_visitor_sees_calls_and_definitions():
    visitor = _OpNames()
    visitor.visit_expr(_module()["main"])
    assert visitor.names == ["relax.add", "relax.nn.relu"]
    assert visitor.defs == ["x", "w", "lv", "lv1", "lv2", "gv"]


def test_identity_mutator_returns_the_same_function():
    func = _module()["main"]
    assert ExprMutator().visit_expr(func) is func


class _ReluToSigmoidOfDoubled(ExprMutator):
    def visit_call_(self, call):
        call = super().visit_call_(call)
        if isinstance(call.op, Op) and call.op.name == "relax.nn.relu":
            doubled = binary.multiply(call.args[0], const(np.float32(2.0)))
            return Call(Op.get("relax.sigmoid"), [doubled])
        return call


def test_mutator_rewrites_and_renormalizes():
    mod = _module()
    new = _ReluToSigmoidOfDoubled(mod).visit_expr(mod["main"])
    assert new is not mod["main"]
    block = new.body.blocks[0]
    assert isinstance(block, DataflowBlock)
    ops = [b.value.op.name for b in block.bindings if isinstance(b.value, Call)]
    assert ops == ["relax.add", "relax.multiply", "relax.sigmoid"]
    # the nested multiply was bound to a fresh DataflowVar before the sigmoid
    assert type(block.bindings[1].var) is DataflowVar
    mod["main"] = new
    assert well_formed(mod, raise_error=True)


class _Specialize(ExprMutator):
    """Changes a parameter's struct info: later bindings get new variables."""

    def __init__(self, old, new):
        super().__init__()
        self.set_var_remap(old, new)


def test_struct_info_change_renames_dependent_vars():
    n = tir.Var("n", "int64")
    x = Var("x", TensorStructInfo((n,), "float32"))
    bb = BlockBuilder()
    with bb.function("main", params=[x]):
        y = bb.emit(nn.relu(x))
        bb.emit_func_output(y)
    func = bb.get()["main"]
    x4 = Var("x", TensorStructInfo((4,), "float32"))
    mutator = _Specialize(x, x4)
    body = mutator.visit_expr(func.body)
    binding = body.blocks[0].bindings[0]
    assert binding.var is not y and binding.var.struct_info.shape_values[0].value == 4
    assert body.body is binding.var


def test_match_cast_and_constants_pass_through():
    x = Var("x", TensorStructInfo(ndim=1, dtype="float32"))
    n = tir.Var("n", "int64")
    bb = BlockBuilder()
    with bb.function("main", params=[x]):
        y = bb.match_cast(x, TensorStructInfo((n,), "float32"))
        z = bb.emit(binary.add(y, const(np.ones(1, "float32"))))
        bb.emit_func_output(z)
    func = bb.get()["main"]
    again = ExprMutator().visit_expr(func)
    assert again is func
    assert isinstance(func.body.blocks[0].bindings[0], MatchCast)
    assert isinstance(func.body.blocks[0].bindings[1].value.args[1], Constant)
    assert structural_equal(again, func)
