"""KillAfterLastUse: vm.kill_object after the last use of each bound variable."""
from rvm.ir.module import IRModule
from rvm.ir.base import assert_structural_equal
from rvm.relax.binding import BindingBlock, SeqExpr, VarBinding
from rvm.relax.expr import If, Tuple, Var
from rvm.relax.function import Function
from rvm.relax.struct_info import TensorStructInfo
from rvm.relax.transform.kill_after_last_use import KillAfterLastUse
from rvm.relax.transform.lowering_util import normalized

from tests.relax.transform.builders import FunctionBuilder, kernel, op

F32 = TensorStructInfo((2, 4), "float32")


def _run(func):
    return KillAfterLastUse()(IRModule({"main": func}))["main"]


def _kill(fb, var):
    fb.let(op("relax.vm.kill_object", var), "_")


def test_kill_after_last_use_and_not_the_result():
    x = Var("x", F32)
    before = FunctionBuilder([x])
    a0 = before.alloc_tensor([2, 4], "float32")
    before.let(kernel("k", x, a0), "_")
    lv0 = before.let(a0, "lv0")
    a1 = before.alloc_tensor([2, 4], "float32")
    before.let(kernel("k", lv0, a1), "_")
    before.let(op("relax.memory.kill_tensor", a0), "_")  # superseded
    a2 = before.alloc_tensor([2, 4], "float32")
    before.let(kernel("k", a1, a2), "_")
    gv = before.let(a2, "gv")

    x = Var("x", F32)
    expected = FunctionBuilder([x])
    e0 = expected.alloc_tensor([2, 4], "float32")
    expected.let(kernel("k", x, e0), "_")
    elv0 = expected.let(e0, "lv0")
    e1 = expected.alloc_tensor([2, 4], "float32")
    expected.let(kernel("k", elv0, e1), "_")
    _kill(expected, e0)  # a0 and its alias lv0 are one object: killed once, by its first name
    e2 = expected.alloc_tensor([2, 4], "float32")
    expected.let(kernel("k", e1, e2), "_")
    _kill(expected, e1)
    egv = expected.let(e2, "gv")  # gv is the result: neither it nor a2 is killed
    assert_structural_equal(_run(before.finish(gv)), expected.finish(egv))


def test_parameters_and_void_results_are_not_killed():
    x = Var("x", F32)
    before = FunctionBuilder([x])
    a0 = before.alloc_tensor([2, 4], "float32")
    before.let(kernel("k", x, a0), "_")
    func = before.finish(a0)
    assert_structural_equal(_run(func), func)


def test_kills_inside_if_branches():
    c = Var("c", TensorStructInfo((), "bool"))
    x = Var("x", F32)
    t = Var("t", F32)
    inner = Var("inner", F32)
    branch = SeqExpr([BindingBlock([
        VarBinding(inner, normalized(op("relax.add", x, x))),
        VarBinding(t, normalized(op("relax.add", inner, inner)))])], t)
    r = Var("r", F32)
    y = Var("y", F32)
    out = Var("out", F32)
    body = SeqExpr([BindingBlock([
        VarBinding(y, normalized(op("relax.add", x, x))),
        VarBinding(r, normalized(If(c, branch, y))),
        VarBinding(out, Tuple([r]))])], out)
    after = _run(Function([c, x], body))
    bindings = after.body.blocks[0].bindings
    killed = [b.value.args[0].name_hint for b in bindings
              if getattr(b.value, "op", None) is not None
              and getattr(b.value.op, "name", "") == "relax.vm.kill_object"]
    assert killed == ["y", "r"]  # y after the If (its last use), r after the tuple
    new_branch = bindings[1].value.true_branch.blocks[0].bindings
    assert [b.var.name_hint for b in new_branch] == ["inner", "t", "_"]
    assert new_branch[2].value.args[0] is inner


def test_branch_alias_of_an_outer_variable_is_not_killed_in_the_branch():
    c = Var("c", TensorStructInfo((), "bool"))
    x = Var("x", F32)
    y = Var("y", F32)
    alias = Var("alias", F32)
    t = Var("t", F32)
    branch = SeqExpr([BindingBlock([
        VarBinding(alias, y),  # shares y's register in the VM
        VarBinding(t, normalized(op("relax.add", alias, alias)))])], t)
    r = Var("r", F32)
    out = Var("out", F32)
    body = SeqExpr([BindingBlock([
        VarBinding(y, normalized(op("relax.add", x, x))),
        VarBinding(r, normalized(If(c, branch, x))),
        VarBinding(out, normalized(op("relax.add", r, y)))])], out)
    after = _run(Function([c, x], body))
    branch_bindings = after.body.blocks[0].bindings[1].value.true_branch.blocks[0].bindings
    assert [b.var.name_hint for b in branch_bindings] == ["alias", "t"]
    top = [b.value.args[0].name_hint for b in after.body.blocks[0].bindings
           if getattr(b.value, "op", None) is not None
           and getattr(b.value.op, "name", "") == "relax.vm.kill_object"]
    assert sorted(top) == ["r", "y"]  # both after their last use, the final add


def test_variables_bound_to_constants_and_immediates_are_not_killed():
    import numpy as np

    from rvm.relax.expr import PrimValue, const

    x = Var("x", F32)
    fb = FunctionBuilder([x])
    c = fb.let(const(np.ones((2, 4), "float32")), "c")
    p = fb.let(PrimValue(3), "p")
    y = fb.let(op("relax.add", x, c), "y")
    out = fb.let(Tuple([y, p]), "out")
    z = fb.let(Tuple([x]), "z")
    fb.let(Tuple([z]), "keep")  # z is an object (a tuple): killed after its last use
    func = fb.finish(out)
    killed = [b.value.args[0].name_hint for b in _run(func).body.blocks[0].bindings
              if getattr(getattr(b.value, "op", None), "name", "") == "relax.vm.kill_object"]
    assert killed == ["y", "z", "keep"]  # neither c nor p
