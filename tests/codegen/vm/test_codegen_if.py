"""VM codegen of Relax If: backpatched jumps, a merge register, nested branches."""
import numpy as np
import pytest

import rvm
from rvm.codegen.vm.codegen import vm_codegen
from rvm.ir.module import IRModule
from rvm.relax.binding import BindingBlock, SeqExpr, VarBinding
from rvm.relax.expr import If, PrimValue, Var
from rvm.relax.struct_info import ObjectStructInfo, PrimStructInfo, TensorStructInfo
from rvm.vm.machine import VirtualMachine
from tests.codegen.vm.lowered import extern, func


@pytest.fixture(autouse=True)
def _funcs():
    rvm.register_func("test.codegen.mul", lambda a, b: a * b, override=True)


def _branch(var, value):
    return SeqExpr([BindingBlock([VarBinding(var, value)])], var)


def _if_module(cond_sinfo):
    cond, x = Var("cond", cond_sinfo), Var("x", ObjectStructInfo())
    t, f = Var("t", ObjectStructInfo()), Var("f", ObjectStructInfo())
    r = Var("r", ObjectStructInfo())
    branch = If(cond, _branch(t, extern("test.codegen.mul", x, PrimValue(2))),
                _branch(f, extern("test.codegen.mul", x, PrimValue(3))))
    return IRModule({"main": func([cond, x], [(r, branch)], r, "main")})


def test_if_on_tensor_condition_reads_it():
    ex = vm_codegen(_if_module(TensorStructInfo((), "bool"))).get()
    text = ex.as_text()
    assert "read_if_cond" in text and text.count("call  vm.builtin.copy") == 2
    vm = VirtualMachine(ex)
    assert vm["main"](np.array(True), 5) == 10
    assert vm["main"](np.array(False), 5) == 15


def test_if_on_prim_condition_branches_directly():
    ex = vm_codegen(_if_module(PrimStructInfo("bool"))).get()
    assert "read_if_cond" not in ex.as_text()
    vm = VirtualMachine(ex)
    assert vm["main"](True, 7) == 14 and vm["main"](False, 7) == 21


def test_nested_if():
    c1, c2 = Var("c1", PrimStructInfo("bool")), Var("c2", PrimStructInfo("bool"))
    x = Var("x", ObjectStructInfo())
    a, b, c = (Var(n, ObjectStructInfo()) for n in "abc")
    inner_r, r = Var("ir", ObjectStructInfo()), Var("r", ObjectStructInfo())
    inner = If(c2, _branch(a, extern("test.codegen.mul", x, PrimValue(2))),
               _branch(b, extern("test.codegen.mul", x, PrimValue(3))))
    outer = If(c1, _branch(inner_r, inner), _branch(c, extern("test.codegen.mul", x,
                                                                PrimValue(5))))
    ex = vm_codegen(IRModule({"main": func([c1, c2, x], [(r, outer)], r, "main")})).get()
    vm = VirtualMachine(ex)
    results = {(p, q): vm["main"](p, q, 1) for p in (True, False) for q in (True, False)}
    assert results == {(True, True): 2, (True, False): 3, (False, True): 5, (False, False): 5}


def test_kill_inside_one_branch_does_not_hide_a_kill_in_the_other():
    from tests.codegen.vm.lowered import alloc_storage, kill

    cond, x = Var("cond", PrimStructInfo("bool")), Var("x", ObjectStructInfo())
    s = Var("s", ObjectStructInfo())
    k1, k2, k3 = (Var(n, ObjectStructInfo()) for n in ("k1", "k2", "k3"))
    t, f, r = (Var(n, ObjectStructInfo()) for n in ("t", "f", "r"))
    true_branch = SeqExpr([BindingBlock([VarBinding(k1, kill(s)), VarBinding(t, x)])], t)
    false_branch = SeqExpr([BindingBlock([VarBinding(f, x)])], f)
    branch = If(cond, true_branch, false_branch)
    main = func([cond, x], [(s, alloc_storage(8)), (r, branch), (k2, kill(s)),
                            (k3, extern("test.codegen.mul", x, PrimValue(1)))], r, "main")
    ex = vm_codegen(IRModule({"main": main})).get()
    assert ex.as_text().count("call  vm.builtin.null_value") == 2


def test_recursive_function():
    """fact(n) = 1 if n < 2 else n * fact(n - 1), with the recursion through a GlobalVar."""
    rvm.register_func("test.codegen.lt", lambda a, b: a < b, override=True)
    rvm.register_func("test.codegen.sub", lambda a, b: a - b, override=True)
    n = Var("n", PrimStructInfo("int64"))
    small, one, m, rec, prod = (Var(name, ObjectStructInfo())
                                for name in ("small", "one", "m", "rec", "prod"))
    r = Var("r", ObjectStructInfo())
    mod = IRModule()
    gv = rvm.ir.GlobalVar("fact")
    false_branch = SeqExpr([BindingBlock([
        VarBinding(m, extern("test.codegen.sub", n, PrimValue(1))),
        VarBinding(rec, rvm.relax.Call(gv, [m])),
        VarBinding(prod, extern("test.codegen.mul", n, rec))])], prod)
    body = If(small, SeqExpr([BindingBlock([VarBinding(one, PrimValue(1))])], one), false_branch)
    small.struct_info = PrimStructInfo("bool")
    mod.add(gv, func([n], [(small, extern("test.codegen.lt", n, PrimValue(2))), (r, body)], r,
                     "fact"))
    ex = vm_codegen(mod).get()
    assert VirtualMachine(ex)["fact"](10) == 3628800
