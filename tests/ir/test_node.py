import pytest

from rvm.ir.expr import GlobalVar, RelaxExpr
from rvm.ir.node import Node, Span


def test_with_fields_copies_and_checks_names():
    gv = GlobalVar("f")
    gv2 = gv.with_fields(name_hint="g")
    assert gv.name_hint == "f" and gv2.name_hint == "g"
    with pytest.raises(AttributeError, match="no field"):
        gv.with_fields(bogus=1)


def test_hash_is_identity():
    a, b = GlobalVar("f"), GlobalVar("f")
    assert len({a, b}) == 2 and a.same_as(a) and not a.same_as(b)


def test_span_text():
    assert str(Span("m.py", 3, 1)) == "m.py:3"


def test_struct_info_missing_is_an_error():
    with pytest.raises(ValueError, match="struct_info"):
        RelaxExpr().struct_info


def test_generic_repr_lists_fields():
    class Pair(Node):
        _fields = ("a", "b")

        def __init__(self, a, b):
            self.a, self.b = a, b

    from rvm.ir.node import generic_repr
    assert generic_repr(Pair(1, 2)) == "Pair(a=1, b=2)"
