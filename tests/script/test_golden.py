"""Golden printer tests: the MLP modules of SPEC.md §3 and seed 004, built with the builder APIs
(TIR constructors, te, BlockBuilder), print exactly the text in ``golden/``.

The expected texts follow TVMScript's printed form: the import comments,
``@I.ir_module class Module``, symbolic variables declared before first use,
``# with T.block("root"):``, inferred ``T.reads``/``T.writes``, ``cls =
Module`` and ``metadata[...]`` references for bound constants.
"""
import pathlib

import pytest

from rvm.script import from_source

from tests.script import programs

GOLDEN = pathlib.Path(__file__).parent / "golden"

CASES = {
    "spec3_module": programs.spec3_module_by_builders,
    "block_builder_module": programs.block_builder_module,
    "fused_matmul_relu": programs.fused_matmul_relu,
    "bound_params_module": programs.bound_params_module,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_printed_text_matches_golden(name):
    expected = (GOLDEN / f"{name}.txt").read_text()
    assert CASES[name]().script() + "\n" == expected


def test_spec3_script_and_builders_print_the_same():
    """SPEC §3's module as users write it prints exactly like the builder-made one."""
    written = from_source(programs.MY_MODULE).script()
    assert written + "\n" == (GOLDEN / "spec3_module.txt").read_text()


def test_bind_params_pass_prints_like_the_seed():
    """The real BindParams pass gives the seed's printed module (same text as the hand-bound
    one)."""
    expected = (GOLDEN / "bound_params_module.txt").read_text()
    assert programs.bind_params_pass_module().script() + "\n" == expected


def test_bound_params_text_mentions_metadata_but_omits_it():
    text = programs.bound_params_module().script()
    assert 'metadata["relax.expr.Constant"][3]' in text
    assert text.endswith("# Metadata omitted. Use show_meta=True in script() method to show it.")
    shown = programs.bound_params_module().script(show_meta=True)
    assert shown.count('{"dtype": "float32", "shape": [128, 784]') == 1
