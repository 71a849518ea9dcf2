"""Every module a Relax pass receives or returns in these tests must round-trip through the
script printer and parser: parse(print(m)) is structurally equal to m."""
import ast

import pytest

from rvm.ir.base import assert_structural_equal
from rvm.script import from_source
from rvm.ir.transform import PassContext, PassInstrument


class RoundTrip(PassInstrument):
    """Prints each module, parses the text back and compares; records failures."""

    def __init__(self):
        self.checked = {}  # id -> module, kept alive so an id is never reused
        self.failures = []

    def _check(self, mod, info, when):
        if id(mod) in self.checked:
            return
        self.checked[id(mod)] = mod
        if mod.get_attr("external_mods"):  # runtime modules (RunCodegen's) are not script
            mod = mod.with_attr("external_mods", None)
            mod.attrs.pop("external_mods")
        try:
            text = mod.script(show_meta=True)
            ast.parse(text)
            assert_structural_equal(from_source(text), mod)
        except Exception as err:  # collected and reported once the test ends
            self.failures.append(f"{when} {info.name}: {type(err).__name__}: {err}"[:2000])

    def run_before_pass(self, mod, info):
        self._check(mod, info, "before")

    def run_after_pass(self, mod, info):
        self._check(mod, info, "after")


@pytest.fixture(autouse=True)
def modules_round_trip(request):
    inst = RoundTrip()
    with PassContext(instruments=[inst]):
        yield
    assert not inst.failures, "\n".join(inst.failures)
