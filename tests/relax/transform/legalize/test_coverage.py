"""Every operator with a legalization rule has a numerical case through the c target in one
of this directory's families (so a new operator cannot land untested)."""
import importlib
import pathlib

from rvm.relax.expr import Call
from rvm.relax.op.registry import Op
from rvm.relax.transform.legalize_ops import LEGALIZE_RULES
from tests.relax.transform.legalize.harness import module_of


def _ops_in(expr, found):
    if isinstance(expr, Call):
        if isinstance(expr.op, Op):
            found.add(expr.op.name)
        for arg in expr.args:
            _ops_in(arg, found)


def test_every_legalized_operator_has_a_numerical_case():
    found = set()
    for path in sorted(pathlib.Path(__file__).parent.glob("test_*.py")):
        module = importlib.import_module(f"tests.relax.transform.legalize.{path.stem}")
        cases = getattr(module, "CASES", None)
        if not cases:
            continue
        mod = module_of(cases)
        for func in mod.functions.values():
            for block in func.body.blocks:
                for binding in block.bindings:
                    _ops_in(binding.value, found)
    missing = sorted(set(LEGALIZE_RULES) - found)
    assert not missing, f"operators without a numerical case: {missing}"
