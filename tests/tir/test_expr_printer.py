"""The TIR expression printer and its dialects print one expression each their own way."""
import pytest

from rvm import tir
from rvm.codegen.c.expr import CExprPrinter, CodegenError
from rvm.script.printer.names import NameTable
from rvm.script.printer.tir_expr import ExprPrinter as ScriptPrinter
from rvm.tir.analysis import used_vars
from rvm.tir.expr_printer import dim_text, expr_text
from rvm.tir.index_map import IndexMap, index_expr_text


def _sample():
    n = tir.Var("n", "int64")
    i = tir.Var("i", "int64")
    return n, i, tir.min(tir.Cast("int64", n) * tir.const(2, "int64") - i, i // 4 + 1)


def test_one_expression_in_every_dialect():
    n, i, e = _sample()
    assert expr_text(e) == 'T.min(T.Cast("int64", n) * T.int64(2) - i, i // T.int64(4) + T.int64(1))'
    assert dim_text(e) == "T.min(n * 2 - i, i // 4 + 1)"
    assert index_expr_text(e.b, {id(i): "v0"}) == "v0 // 4 + 1"
    names = NameTable()
    names.define(n, "N")
    assert ScriptPrinter(names)(e).startswith('T.min(T.Cast("int64", N) * T.int64(2) - i')
    c = CExprPrinter("k", {})
    c.define(n), c.define(i)
    assert c.expr(e) == ("rvm_min_int64(((((int64_t)n) * INT64_C(2)) - i), "
                         "(((int64_t)rvm_floordiv(i, INT64_C(4))) + INT64_C(1)))")
    assert "rvm_min_int64" in c.helpers


def test_precedence_parenthesizes_only_where_needed():
    i, j = tir.Var("i"), tir.Var("j")
    assert expr_text((i + 1) * j) == "(i + 1) * j"
    assert expr_text(i - (j - 1)) == "i - (j - 1)"
    assert expr_text(i * -1) == "i * -1"
    assert expr_text(tir.Not(i < j)) == "not i < j"
    assert IndexMap.from_func(lambda a, b: (b, (a + b) % 3)).lambda_text() == \
        "lambda a, b: (b, (a + b) % 3)"


def test_dialects_reject_what_they_cannot_print():
    i = tir.Var("i")
    ramp = tir.Ramp(i, 1, 4)
    assert expr_text(ramp) == "T.Ramp(i, 1, 4)"
    with pytest.raises(ValueError, match="cannot print Ramp .* as an index expression"):
        index_expr_text(ramp)
    c = CExprPrinter("k", {})
    with pytest.raises(CodegenError, match="variable 'i' is used but never defined"):
        c.expr(i + 1)
    c.define(i)
    with pytest.raises(CodegenError, match="cannot render Ramp"):
        c.expr(ramp)
    with pytest.raises(TypeError, match="cannot print object"):
        ScriptPrinter(NameTable())(object())
    assert expr_text(object()).startswith("<object object")  # repr never fails


def test_used_vars_in_order_of_first_use_bound_ones_included():
    i, j, k = tir.Var("i"), tir.Var("j"), tir.Var("k")
    let = tir.Let(k, j, k + i)
    found = used_vars([let, i * j])
    assert [v.name_hint for v in found.values()] == ["j", "k", "i"]
    assert set(found) == {id(i), id(j), id(k)}
    assert used_vars(tir.const(3)) == {}
