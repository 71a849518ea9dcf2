import pytest

from rvm import tir
from rvm.ir.expr import GlobalVar
from rvm.ir.module import IRModule
from rvm.relax.analysis.well_formed import well_formed, well_formed_errors
from rvm.relax.binding import BindingBlock, DataflowBlock, MatchCast, SeqExpr, VarBinding
from rvm.relax.block_builder import BlockBuilder
from rvm.relax.expr import Call, DataflowVar, If, ShapeExpr, Var, const
from rvm.relax.function import Function
from rvm.relax.op.base import call_dps_packed, call_packed, call_pure_packed, call_tir
from rvm.relax.struct_info import TensorStructInfo

T4 = TensorStructInfo((4,), "float32")


def _relu(x, out=T4):
    call = call_dps_packed("env.relu", (x,), out)
    object.__setattr__(call, "struct_info_", out)
    return call


def _module(*funcs):
    return IRModule({name: f for name, f in funcs})


def _errors(func):
    return well_formed_errors(_module(("main", func)))


def test_well_formed_function_and_message_access():
    x = Var("x", T4)
    lv, gv = DataflowVar("lv", T4), Var("gv", T4)
    func = Function([x], SeqExpr([DataflowBlock([VarBinding(lv, _relu(x)),
                                                 VarBinding(gv, lv)])], gv))
    assert well_formed(func) and well_formed(_module(("main", func)), raise_error=True)


def test_dataflow_var_used_outside_its_block():
    x = Var("x", T4)
    lv = DataflowVar("lv", T4)
    func = Function([x], SeqExpr([DataflowBlock([VarBinding(lv, _relu(x))])], lv))
    assert not well_formed(func)
    with pytest.raises(ValueError, match="DataflowVar 'lv' is used outside the dataflow block"):
        well_formed(func, raise_error=True)


def test_use_before_definition():
    x = Var("x", T4)
    a, b = Var("a", T4), Var("b", T4)
    func = Function([x], SeqExpr([BindingBlock([VarBinding(a, _relu(b)),
                                                VarBinding(b, _relu(x))])], a))
    (message,) = _errors(func)
    assert "Var 'b' is used before its definition" in message and message.startswith("main:")


def test_variable_bound_twice():
    x = Var("x", T4)
    a = Var("a", T4)
    func = Function([x], SeqExpr([BindingBlock([VarBinding(a, _relu(x)),
                                                VarBinding(a, _relu(x))])], a))
    assert any("Var 'a' is bound more than once" in e for e in _errors(func))
    param_rebound = Function([x], SeqExpr([BindingBlock([VarBinding(x, _relu(x))])], x))
    assert any("'x' is bound more than once" in e for e in _errors(param_rebound))


def test_output_shape_with_undefined_symbolic_var():
    n = tir.Var("n", "int64")
    x = Var("x", T4)
    out = TensorStructInfo((n,), "float32")
    lv = Var("lv", out)
    func = Function([x], SeqExpr([BindingBlock([VarBinding(lv, _relu(x, out))])], lv),
                    ret_struct_info=TensorStructInfo(ndim=1, dtype="float32"))
    errors = _errors(func)
    assert errors and all("symbolic variable 'n'" in e for e in errors)
    with pytest.raises(ValueError, match="symbolic variable 'n' used in"):
        well_formed(func, raise_error=True)


def test_symbolic_vars_defined_by_params_and_match_cast():
    n, m = tir.Var("n", "int64"), tir.Var("m", "int64")
    x = Var("x", TensorStructInfo((n,), "float32"))
    y = Var("y", TensorStructInfo((m,), "float32"))
    out = TensorStructInfo((n * 2,), "float32")
    a = Var("a", out)
    b = Var("b", TensorStructInfo((m,), "float32"))
    func = Function([x], SeqExpr([BindingBlock([
        VarBinding(a, _relu(x, out)),
        MatchCast(y, a, TensorStructInfo((m,), "float32")),
        VarBinding(b, _relu(y, TensorStructInfo((m,), "float32"))),
    ])], b))
    assert _errors(func) == []
    # n * 2 as a whole dimension does not define n
    p = Var("p", TensorStructInfo((n * 2,), "float32"))
    assert any("'n'" in e for e in _errors(Function([p], SeqExpr([], p))))


def test_impure_call_in_dataflow_block():
    x = Var("x", T4)
    lv = DataflowVar("lv", T4)
    call = call_packed("env.print", x, sinfo_args=T4)
    object.__setattr__(call, "struct_info_", T4)
    gv = Var("gv", T4)
    func = Function([x], SeqExpr([DataflowBlock([VarBinding(lv, call), VarBinding(gv, lv)])], gv))
    (message,) = _errors(func)
    assert "impure call of 'env.print'" in message and "'lv'" in message
    assert "dataflow block" in message


def test_impure_call_in_pure_function_and_pure_packed():
    x = Var("x", T4)
    a = Var("a", T4)
    call = call_packed("env.print", x, sinfo_args=T4)
    object.__setattr__(call, "struct_info_", T4)
    body = SeqExpr([BindingBlock([VarBinding(a, call)])], a)
    assert any("pure function" in e for e in _errors(Function([x], body)))
    assert _errors(Function([x], body, is_pure=False)) == []
    assert _errors(Function([x], body, attrs={"relax.force_pure": True})) == []
    lv, gv = DataflowVar("lv", T4), Var("gv", T4)
    pure = call_pure_packed("env.relu", x, sinfo_args=T4)
    object.__setattr__(pure, "struct_info_", T4)
    ok = Function([x], SeqExpr([DataflowBlock([VarBinding(lv, pure), VarBinding(gv, lv)])], gv))
    assert _errors(ok) == []


def test_call_tir_of_missing_function_names_it():
    x = Var("x", T4)
    bb = BlockBuilder(check_global_vars=False)
    with bb.function("main", params=[x]):
        with bb.dataflow():
            lv = bb.emit(call_tir(GlobalVar("ghost_kernel"), (x,), T4))
            gv = bb.emit_output(lv)
        bb.emit_func_output(gv)
    mod = bb.get()
    with pytest.raises(ValueError, match="call_tir names function 'ghost_kernel'"):
        well_formed(mod, raise_error=True)
    mod["ghost_kernel"] = Function([Var("k", T4)], SeqExpr([], const([1.0] * 4)))
    assert well_formed(mod)


def test_dataflow_var_bound_outside_dataflow_block_and_as_param():
    x = Var("x", T4)
    lv = DataflowVar("lv", T4)
    func = Function([x], SeqExpr([BindingBlock([VarBinding(lv, _relu(x))])], x))
    assert any("bound outside a dataflow block" in e for e in _errors(func))


def test_if_scopes_and_dataflow_restriction():
    c = Var("c", TensorStructInfo((), "bool"))
    x = Var("x", T4)
    inner = Var("inner", T4)
    then = SeqExpr([BindingBlock([VarBinding(inner, _relu(x))])], inner)
    cond = If(c, then, SeqExpr([], x))
    object.__setattr__(cond, "struct_info_", T4)
    r = Var("r", T4)
    good = Function([c, x], SeqExpr([BindingBlock([VarBinding(r, cond)])], r))
    assert _errors(good) == []
    leak = Var("leak", T4)
    bad = Function([c, x], SeqExpr([BindingBlock([VarBinding(r, cond),
                                                  VarBinding(leak, inner)])], leak))
    assert any("'inner' is used outside the scope" in e for e in _errors(bad))


def test_missing_struct_info_and_global_symbol_mismatch():
    x = Var("x", T4)
    a = Var("a", T4)
    call = call_dps_packed("env.relu", (x,), T4)  # never normalized
    func = Function([x], SeqExpr([BindingBlock([VarBinding(a, call)])], a), ret_struct_info=T4)
    assert any("has no struct info" in e for e in _errors(func))
    assert _errors(func) != [] and well_formed_errors(func, check_struct_info=False) == []
    named = Function([x], SeqExpr([], x), attrs={"global_symbol": "other"})
    assert any("global_symbol 'other'" in e for e in _errors(named))


def test_shape_expr_uses_and_rejects_other_inputs():
    n = tir.Var("n", "int64")
    x = Var("x", T4)
    s = Var("s", ShapeExpr([n]).struct_info)
    func = Function([x], SeqExpr([BindingBlock([VarBinding(s, ShapeExpr([n]))])], x))
    assert any("symbolic variable 'n'" in e for e in _errors(func))
    with pytest.raises(TypeError, match="IRModule or a relax Function"):
        well_formed(Call(GlobalVar("f"), []))
