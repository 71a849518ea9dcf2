"""Round trip: every module of the suite prints as valid Python that parses back equal."""
import ast

import pytest

from rvm.ir import assert_structural_equal
from rvm.script import from_source

from tests.script.programs import all_modules

MODULES = all_modules()


@pytest.mark.parametrize("make", [m for _, m in MODULES], ids=[n for n, _ in MODULES])
def test_print_then_parse_is_structurally_equal(make):
    mod = make()
    text = mod.script(show_meta=True)
    ast.parse(text)
    again = from_source(text)
    assert_structural_equal(again, mod)
    assert again.script(show_meta=True) == text, "printing is not deterministic"
