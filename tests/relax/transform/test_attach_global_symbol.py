"""AttachGlobalSymbol: every function gets global_symbol = its name; existing ones are kept."""
from rvm.ir.module import IRModule
from rvm.relax.binding import SeqExpr
from rvm.relax.expr import Var
from rvm.relax.function import Function
from rvm.relax.struct_info import TensorStructInfo
from rvm.relax.transform.attach_global_symbol import AttachGlobalSymbol


def _func(attrs=None):
    x = Var("x", TensorStructInfo((2,), "float32"))
    return Function([x], SeqExpr([], x), attrs=attrs)


def test_missing_symbols_are_attached():
    mod = IRModule({"main": _func({"global_symbol": "main"}), "helper": _func()})
    after = AttachGlobalSymbol()(mod)
    assert after["helper"].get_attr("global_symbol") == "helper"
    assert after["main"] is mod["main"]
    assert mod["helper"].get_attr("global_symbol") is None  # the input is not modified


def test_private_prim_funcs_get_their_name():
    from rvm.te.create_prim_func import create_prim_func
    from rvm.te.operation import compute, placeholder

    a = placeholder((4,), name="A")
    b = compute((4,), lambda i: a[i] + 1.0, name="B")
    prim = create_prim_func([a, b]).without_attr("global_symbol")
    after = AttachGlobalSymbol()(IRModule({"add_one": prim}))
    assert after["add_one"].get_attr("global_symbol") == "add_one"


def test_nothing_to_do_returns_the_module():
    mod = IRModule({"main": _func({"global_symbol": "main"})})
    assert AttachGlobalSymbol()(mod) is mod
