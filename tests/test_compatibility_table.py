"""COMPATIBILITY.md says what the code does: every TVM name it lists as present resolves in
rvm (under TVM's name with ``tvm`` replaced by ``rvm``, or under the rvm spelling it gives),
and every name it lists as absent does not."""
import importlib
import pathlib
import re

import pytest

from rvm.script.parser.relax_builtins import RELAX_TABLE, operator_builtin
from rvm.script.parser.tir_builtins import TIR_TABLE

TABLE = pathlib.Path(__file__).resolve().parents[1] / "COMPATIBILITY.md"
ROW = re.compile(r"^\| `([^`]+)` \| (same|—|`[^`]+`) \|")


def _rows():
    rows = [ROW.match(line).groups() for line in TABLE.read_text().splitlines()
            if ROW.match(line)]
    assert len(rows) > 100
    return rows


def _resolves(dotted):
    """Whether ``rvm.a.b.c`` names something (a module, then attributes). The module part
    must be the module of that name, not another module put in its place (an alias)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        path = ".".join(parts[:cut])
        try:
            obj = importlib.import_module(path)
        except ImportError:
            continue
        assert obj.__name__ == path, f"{path} is an alias of {obj.__name__}"
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def _script_name(name):
    """Whether the parser knows ``name`` and the namespace module has it as a Python object."""
    dialect, rest = name.split(".", 1)
    if dialect == "T":
        parsed = rest in TIR_TABLE or any(k.startswith(rest + ".") for k in TIR_TABLE)
    else:
        parsed = rest in RELAX_TABLE or operator_builtin(rest) is not None
    obj = importlib.import_module("rvm.script.parser." + ("tir" if dialect == "T" else "relax"))
    for attr in rest.split("."):
        if not hasattr(obj, attr):
            return False
        obj = getattr(obj, attr)
    return parsed


@pytest.mark.parametrize("tvm_name, rvm", _rows())
def test_row_matches_the_code(tvm_name, rvm):
    if tvm_name.startswith(("R.", "T.")):
        assert rvm == "same" and _script_name(tvm_name), tvm_name
        return
    assert tvm_name.startswith("tvm")
    ours = "rvm" + tvm_name[3:]
    if rvm == "same":
        assert _resolves(ours), f"{ours} does not exist"
    elif rvm == "—":
        assert not _resolves(ours), f"{ours} exists: update COMPATIBILITY.md"
    else:
        assert _resolves(rvm.strip("`")), f"{rvm} does not exist"
