import pytest

from rvm import ir, tir
from rvm.ir.module import IRModule


def _func():
    x = tir.Var("x", "int32")
    return _Fn(x + 1)


class _Fn(ir.BaseFunc):
    _fields = ("body", "attrs")

    def __init__(self, body, attrs=None):
        self.body = body
        self.attrs = attrs or {}


def test_add_lookup_and_remove():
    mod = IRModule()
    gv = mod.add("main", _func())
    assert mod.get_global_var("main") is gv
    assert mod["main"] is mod[gv]
    assert "main" in mod and gv in mod and "other" not in mod
    assert mod.get_global_vars() == [gv]
    mod.remove("main")
    assert len(mod) == 0


def test_missing_name_is_named_in_error():
    mod = IRModule({"main": _func()})
    with pytest.raises(ValueError, match="'nope'"):
        mod.get_global_var("nope")
    with pytest.raises(ValueError, match="already has"):
        mod.add("main", _func())


def test_update_func_replaces_and_requires_presence():
    mod = IRModule({"main": _func()})
    new = _func()
    mod.update_func(mod.get_global_var("main"), new)
    assert mod["main"] is new
    with pytest.raises(ValueError):
        mod.update_func(ir.GlobalVar("ghost"), new)


def test_with_attr_makes_new_module():
    mod = IRModule({"main": _func()})
    mod2 = mod.with_attr("target", "c")
    assert mod2.attrs == {"target": "c"} and mod.attrs == {}
    assert mod2["main"] is mod["main"]


def test_func_with_attr_copies():
    f = _func()
    g = f.with_attr("global_symbol", "main")
    assert g.attrs["global_symbol"] == "main" and "global_symbol" not in f.attrs
    assert g.body is f.body


def test_from_expr_uses_global_symbol():
    f = _func().with_attr("global_symbol", "kern")
    assert IRModule.from_expr(f).get_global_vars()[0].name_hint == "kern"
    assert IRModule.from_expr(_func()).get_global_vars()[0].name_hint == "main"


def test_script_without_printer_is_a_clear_error(monkeypatch):
    from rvm.ir import node
    monkeypatch.setattr(node, "_node_printer", [])
    monkeypatch.setattr(ir.module, "_printer", node._node_printer)
    with pytest.raises(RuntimeError, match="rvm.script"):
        IRModule({"main": _func()}).script()


def test_registered_printer_is_used(monkeypatch):
    from rvm.ir import module, node
    monkeypatch.setattr(node, "_node_printer", [])
    monkeypatch.setattr(module, "_printer", node._node_printer)
    module.register_printer(
        lambda obj, show_meta=False, **kw: f"<{type(obj).__name__} {show_meta}>")
    assert IRModule().script(show_meta=True) == "<IRModule True>"


def test_update_merges_and_replaces():
    a, b, c = _func(), _func(), _func()
    mod = IRModule({"f": a})
    mod.update(IRModule({"f": b, "g": c}))
    assert mod["f"] is b and mod["g"] is c
    assert [gv.name_hint for gv, _ in mod.functions_items()] == ["f", "g"]
