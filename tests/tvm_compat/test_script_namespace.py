"""Every operator of ``relax.op`` has its ``R.`` name in script form, as in TVM."""
import pytest

from rvm.relax.op.registry import list_op_names
from rvm.script.parser.relax_builtins import operator_builtin


@pytest.mark.parametrize("name", [n[len("relax."):] for n in list_op_names()
                                  if n.startswith("relax.")])
def test_every_operator_has_its_script_name(name):
    assert operator_builtin(name) is not None, f"R.{name}"
