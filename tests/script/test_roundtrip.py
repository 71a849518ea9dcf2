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
    # Modules whose kernels share the Relax function's symbolic variables
    # (emit_te) compare equal too: each function maps its variables afresh.
    assert_structural_equal(again, mod)
    assert again.script(show_meta=True) == text, "printing is not deterministic"


def _pipeline_stages():
    """(name, module) after each pass of the default build pipeline, for a few modules."""
    from rvm.transform.pipeline import default_build_pipeline

    stages = []
    for name in ("spec3_my_module", "block_builder_emit_te", "bound_params", "relax_calls"):
        mod = dict(MODULES)[name]()
        for ps in default_build_pipeline().passes:
            mod = ps(mod)
            stages.append((f"{name} after {ps.info.name}", mod))
    return stages


def test_every_stage_of_the_build_pipeline_round_trips():
    """Lowered IR (allocations, direct kernel calls, shape heaps) prints and parses back."""
    for name, mod in _pipeline_stages():
        text = mod.script(show_meta=True)
        again = from_source(text)
        try:
            assert_structural_equal(again, mod)
        except ValueError as err:
            raise AssertionError(f"{name}: {err}") from None
