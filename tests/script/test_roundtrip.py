"""Round trip: every module of the suite prints as valid Python that parses back equal."""
import ast

import pytest

from rvm.ir import IRModule, assert_structural_equal
from rvm.ir.node import Node
from rvm.script import from_source
from rvm.tir.expr import Var as TIRVar

from tests.script.programs import all_modules

MODULES = all_modules()


def _tir_vars(node, found, seen):
    if isinstance(node, Node):
        if id(node) in seen:
            return
        seen.add(id(node))
        if isinstance(node, TIRVar):
            found.add(id(node))
        for name in node._fields:
            _tir_vars(getattr(node, name), found, seen)
        if getattr(node, "struct_info_", None) is not None:
            _tir_vars(node.struct_info_, found, seen)
    elif isinstance(node, (list, tuple)):
        for item in node:
            _tir_vars(item, found, seen)
    elif isinstance(node, dict):
        for key, value in node.items():
            _tir_vars(key, found, seen)
            _tir_vars(value, found, seen)


def shares_tir_vars_across_functions(mod):
    """Whether two functions of ``mod`` use the very same TIR variable object.

    The text scopes symbolic variables per function, so such sharing (emit_te
    reuses the Relax function's shape variables in its kernels) is not
    recorded; those modules are compared function by function.
    """
    if not isinstance(mod, IRModule):
        return False
    owners = {}
    for gv, func in mod.functions.items():
        found = set()
        _tir_vars(func, found, set())
        for var_id in found:
            if owners.setdefault(var_id, gv.name_hint) != gv.name_hint:
                return True
    return False


@pytest.mark.parametrize("make", [m for _, m in MODULES], ids=[n for n, _ in MODULES])
def test_print_then_parse_is_structurally_equal(make):
    mod = make()
    text = mod.script(show_meta=True)
    ast.parse(text)
    again = from_source(text)
    if shares_tir_vars_across_functions(mod):
        assert sorted(gv.name_hint for gv in again.functions) == \
            sorted(gv.name_hint for gv in mod.functions)
        for gv, func in mod.functions.items():
            assert_structural_equal(again[gv.name_hint], func)
    else:
        assert_structural_equal(again, mod)
    assert again.script(show_meta=True) == text, "printing is not deterministic"


def test_shared_variable_detection():
    names = dict(MODULES)
    assert shares_tir_vars_across_functions(names["symbolic_emit_te"]())
    assert not shares_tir_vars_across_functions(names["spec3_my_module"]())


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
