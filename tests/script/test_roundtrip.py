"""Round trip: every module of the suite prints as valid Python that parses back equal.

The modules: the script tests' programs (tests/script/programs.py), the pass
tests' modules (tests/script/pass_programs.py), each of those after every
pass of the default build pipeline and their kernels after every pass of the
TIR lowering pipeline, the pass tests' Before modules after their pass, and
``relax.build``'s lowering of the SPEC §3-§6 programs.
"""
import ast
import functools

import pytest

from rvm.driver.relax_build import lower
from rvm.ir import assert_structural_equal
from rvm.ir.module import IRModule
from rvm.runtime.ndarray import array
from rvm.script import from_source
from rvm.relax.transform.pipeline import default_build_pipeline
from rvm.tir.transform.pipeline import lower_tir_pipeline

from tests.script import pass_programs, programs
from tests.relax.transform import spec_modules



def _labels(names):
    """Pass names, a repeated one numbered from its second run ("DeadCodeElimination 2")."""
    seen = {}
    labels = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        labels.append(name if seen[name] == 1 else f"{name} {seen[name]}")
    return labels


PASS_NAMES = _labels([ps.info.name for ps in default_build_pipeline().passes])
TIR_PASS_NAMES = [ps.info.name for ps in lower_tir_pipeline().passes]
# Block-level match_buffer is not lowered (LowerOpaqueBlock refuses it).
TIR_LOWERING_REFUSES = {"tir_low_level"}


def _run_each(passes, mod):
    stages = []
    for ps in passes:
        mod = ps(mod)
        stages.append(mod)
    return stages


@functools.lru_cache(maxsize=None)
def _stages(name):
    """The module ``name`` after each pass of the default build pipeline."""
    return _run_each(default_build_pipeline().passes, dict(SOURCES)[name]())


@functools.lru_cache(maxsize=None)
def _tir_stages(name):
    """The kernels of ``name`` (after the build pipeline, as relax.build compiles them) after
    each pass of the TIR lowering pipeline."""
    made = dict(SOURCES)[name]()
    mod = _stages(name)[-1] if isinstance(made, IRModule) else IRModule.from_expr(made)
    return _run_each(lower_tir_pipeline().passes, mod)


def _spec_lowered():
    """(name, maker) of relax.build's lowering (``lower``) of the SPEC §3-§6 programs."""
    params = {k: array(v) for k, v in spec_modules.mlp_params().items()}
    makers = {
        "spec3_my_module": lambda: spec_modules.MyModule,
        "spec3_my_module_script": lambda: from_source(programs.MY_MODULE),
        "spec3_by_builders": programs.spec3_module_by_builders,
        "spec5_with_env": lambda: spec_modules.MyModuleWithEnv,
        "spec5_mixture": lambda: spec_modules.MyModuleMixture,
        "spec6_mixture_params": lambda: (spec_modules.MyModuleMixture, params),
        "spec6_bind_params": programs.bind_params_pass_module,
        "spec6_bound_constants": programs.bound_params_module,
    }

    def lowered(make):
        made = make()
        mod, bound = made if isinstance(made, tuple) else (made, None)
        return lower(mod, params=bound)

    return [(f"{name} lowered", functools.partial(lowered, make))
            for name, make in makers.items()]


def _cases():
    cases = []
    for name, make in SOURCES:
        cases.append((name, make))
        if isinstance(make(), IRModule):
            cases += [(f"{name} after {ps}", functools.partial(lambda n, k: _stages(n)[k], name, k))
                      for k, ps in enumerate(PASS_NAMES)]
        if name not in TIR_LOWERING_REFUSES:
            cases += [(f"{name} after {ps}", functools.partial(
                lambda n, k: _tir_stages(n)[k], name, k)) for k, ps in enumerate(TIR_PASS_NAMES)]
    for name, make, ps in pass_programs.pass_cases():
        cases.append((name, make))
        if ps is not None:
            cases.append((f"{name} after {ps.__name__}",
                          functools.partial(lambda m, p: p()(m()), make, ps)))
    return cases + _spec_lowered()


SOURCES = programs.all_modules() + pass_programs.valid_modules()
CASES = _cases()


@pytest.mark.parametrize("make", [m for _, m in CASES], ids=[n for n, _ in CASES])
def test_print_then_parse_is_structurally_equal(make):
    mod = make()
    text = mod.script(show_meta=True)
    ast.parse(text)
    again = from_source(text)
    # Modules whose kernels share the Relax function's symbolic variables
    # (emit_te) compare equal too: each function maps its variables afresh.
    assert_structural_equal(again, mod)
    assert again.script(show_meta=True) == text, "printing is not deterministic"
    # Each function printed alone (I.GlobalVar("f") for the functions it calls) parses too.
    for func in (mod.functions.values() if isinstance(mod, IRModule) else ()):
        alone = func.script(show_meta=True)
        assert_structural_equal(from_source(alone), func)


def test_the_round_trip_covers_the_pipeline_and_the_lowering():
    names = [n for n, _ in CASES]
    assert len(names) == len(set(names)) > 900
    assert sum(" after " in n for n in names) >= (9 + 6) * 40
    assert sum(n.endswith(" lowered") for n in names) == 8
