"""DESIGN.md's import rules (its layer table), checked on the source with ast.

Each unit, a package or a subpackage with rules of its own (``relax.transform``,
``tir.transform``), may import only from the units listed for it (and itself); a module
belongs to the longest unit its name starts with. An import is an import statement,
at the top of a file or inside a function, or a module named in a string
(``importlib.import_module("rvm.driver.build_module")``, lazy-attribute tables).
The user-facing facades (rvm/__init__.py, rvm/nd.py, rvm/relax/__init__.py) re-export
and may import anything; a package's own __init__ follows its unit's rules. Library
modules import from the defining module, never from a package __init__.
"""
import ast
import pathlib
import re
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1] / "rvm"

L0 = {"support"}
L1 = L0 | {"runtime", "target"}
IR = L1 | {"ir"}
TIR = IR | {"tir"}
L3 = TIR | {"te", "topi", "relax"}
ALLOWED = {
    "support": set(),
    "runtime": {"support"},
    # Not placed by DESIGN.md: a target description (kind + typed attributes), a value type
    # that codegen, the build drivers and the tuner read; it imports nothing of ours.
    "target": {"support"},
    # Not placed by DESIGN.md: test helpers under TVM's names (tvm.testing); tensors only.
    "testing": {"support", "runtime"},
    # Not placed by DESIGN.md: bridges to other libraries (tvm.contrib); tensors only.
    "contrib": {"support", "runtime"},
    "bytecode": {"support", "runtime"},
    "vm": {"support", "runtime", "bytecode"},
    "ir": {"support", "runtime"},
    "tir": {"support", "runtime", "ir"},
    "tir.transform": {"support", "runtime", "ir", "tir"},
    "te": {"support", "runtime", "ir", "tir"},
    "topi": {"support", "runtime", "ir", "tir", "te"},
    "relax": {"support", "runtime", "ir", "tir", "te"},
    # Default schedules (rules over tir.schedule), at the layer of the Relax passes: the
    # build pipeline runs them.
    "dlight": L3 | {"tir.transform"},
    "relax.transform": L3 | {"bytecode", "tir.transform", "dlight"},
    "relax.frontend": L3 | {"relax.transform"},
    "script": L3 - {"target"},
    "codegen": IR | {"bytecode", "tir", "relax"},
    "driver": L3 | {"bytecode", "vm", "tir.transform", "relax.transform", "dlight", "script",
                    "relax.frontend", "codegen"},
    "meta_schedule": L3 | {"bytecode", "vm", "tir.transform", "relax.transform", "dlight",
                           "script",
                           "relax.frontend", "codegen", "driver"},
    # Ray, optional: executables run on the workers (map_batches), and the runner measuring
    # tuning candidates there implements meta_schedule's runner interface (RayRunner).
    "distributed": {"support", "runtime", "bytecode", "vm", "meta_schedule"},
}
FACADES = {ROOT / "__init__.py", ROOT / "nd.py", ROOT / "relax" / "__init__.py"}
# Applications above every layer (they may import any package, from its defining modules),
# with the reason.
APPLICATIONS = {
    ROOT / "driver" / "cli.py": "the rvm console script: `rvm tune` runs rvm.meta_schedule",
}
# Upward imports that remain, each with the reason; the layering work removes them.
REGISTRATION_IMPORTS = {
    ("rvm/ir/__init__.py", "rvm.script.printer"):
        "installs the script printer behind IRModule.script()/show()/repr",
    ("rvm/relax/transform/__init__.py", "rvm.codegen.byoc"):
        "registers the example codegens RunCodegen calls (relax.ext.ccompiler/examplejson)",
    ("rvm/relax/transform/__init__.py", "rvm.meta_schedule.apply_database"):
        "TVM's path relax.transform.MetaScheduleApplyDatabase, defined by the tuner",
}
MODULE_STRING = re.compile(r"rvm(\.[A-Za-z_]\w*)+")
# Modules without a .py file: the cffi extension and the bridge module it installs.
NATIVE_MODULES = {"rvm.runtime._native", "rvm.runtime._bridge"}


def _module_name(path):
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_package(dotted):
    return (ROOT.parent / pathlib.Path(*dotted.split(".")) / "__init__.py").exists()


def _is_module(dotted):
    if dotted in NATIVE_MODULES:
        return True
    path = ROOT.parent / pathlib.Path(*dotted.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _imports(path):
    """(line, imported module, names) for every import in the file, nested ones included."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, ()
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            yield node.lineno, module, tuple(a.name for a in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if MODULE_STRING.fullmatch(node.value) and _is_module(node.value):
                yield node.lineno, node.value, ()  # importlib.import_module("rvm.x.y")
        elif isinstance(node, ast.JoinedStr) and node.values:
            head = node.values[0]  # f"rvm.relax.{name}": the package before the field
            if isinstance(head, ast.Constant) and isinstance(head.value, str):
                module = head.value.rstrip(".")
                if MODULE_STRING.fullmatch(module) and _is_module(module):
                    yield node.lineno, module, ()


def _sources():
    return sorted(p for p in ROOT.rglob("*.py") if "__pycache__" not in p.parts)


def _unit_of(dotted):
    """The longest unit of ALLOWED that ``dotted`` (below ``rvm.``) lies in, or None."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        if ".".join(parts[:cut]) in ALLOWED:
            return ".".join(parts[:cut])
    return None


def _package_of(path):
    rel = path.relative_to(ROOT).with_suffix("").parts
    return _unit_of(".".join(rel)) if len(rel) > 1 else None


def test_every_package_has_rules():
    packages = {p.name for p in ROOT.iterdir() if (p / "__init__.py").exists()}
    assert packages <= set(ALLOWED), f"packages without layering rules: {packages - set(ALLOWED)}"


def _is_facade(path):
    return path in FACADES


def _defined_in(package):
    """The functions a package's __init__ defines itself (a facade's factories, such as
    ``meta_schedule.runner.create``): their defining module is the facade."""
    init = ROOT.parent / pathlib.Path(*package.split(".")) / "__init__.py"
    tree = ast.parse(init.read_text(), filename=str(init))
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}


def _violations(path):
    facade = _is_facade(path)
    own = _package_of(path)
    for line, module, names in _imports(path):
        if not module.startswith("rvm"):
            continue
        parts = module.split(".")
        where = f"{path.relative_to(ROOT.parent)}:{line}"
        if len(parts) == 1:
            if not facade:
                yield f"{where}: imports the facade 'rvm'; import from the defining module"
            continue
        target = _unit_of(".".join(parts[1:])) or parts[1]
        if facade:
            continue
        if target == "nd":
            yield f"{where}: imports the facade 'rvm.nd'; import rvm.runtime.ndarray"
            continue
        registration = any((str(path.relative_to(ROOT.parent)), m) in REGISTRATION_IMPORTS
                           for m in (module, *(f"{module}.{name}" for name in names)))
        subpackage = path.name == "__init__.py" and module.startswith(_module_name(path) + ".")
        if (own is not None and target != own and target not in ALLOWED[own] and not subpackage
                and path not in APPLICATIONS
                and not target.startswith("_") and not registration):
            yield (f"{where}: package '{own}' may not import '{module}' "
                   f"(allowed: {sorted(ALLOWED[own])})")
        if _is_package(module) and path.name != "__init__.py":  # facades re-export facades
            for name in names:
                if not _is_module(f"{module}.{name}") and name not in _defined_in(module):
                    yield (f"{where}: imports '{name}' from the facade '{module}'; "
                           f"import it from its defining module")


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(ROOT.parent)))
def test_imports_follow_layers(path):
    problems = list(_violations(path))
    assert not problems, "\n".join(problems)


def test_checker_catches_a_forbidden_edge(tmp_path, monkeypatch):
    """The checker itself must fail on an upward import, in a statement, a string or a
    package __init__."""
    fake_root = tmp_path / "rvm"
    (fake_root / "runtime").mkdir(parents=True)
    (fake_root / "vm").mkdir()
    for pkg in ("", "runtime", "vm"):
        (fake_root / pkg / "__init__.py").write_text("")
    bad = fake_root / "runtime" / "bad.py"
    bad.write_text("from rvm.vm.machine import VirtualMachine\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", fake_root)
    assert any("may not import" in v for v in _violations(bad))
    facade_user = fake_root / "vm" / "user.py"
    facade_user.write_text("from rvm.runtime import NDArray\n")
    assert any("facade" in v for v in _violations(facade_user))
    (fake_root / "vm" / "machine.py").write_text("")
    hidden = fake_root / "runtime" / "hidden.py"
    hidden.write_text('import importlib\nVM = importlib.import_module("rvm.vm.machine")\n'
                      'LAZY = {"x": (f"rvm.vm.{1}", "x")}\n')
    assert sum("may not import 'rvm.vm" in v for v in _violations(hidden)) == 2
    init = fake_root / "runtime" / "__init__.py"
    init.write_text('import importlib\nimportlib.import_module("rvm.vm")\n')
    assert any("may not import 'rvm.vm'" in v for v in _violations(init))


def test_checker_catches_an_upward_import_between_subpackages(tmp_path, monkeypatch):
    """Rules hold per subpackage: the Relax core may not reach the Relax passes above it,
    even from inside a function, while the passes may use the core."""
    fake_root = tmp_path / "rvm"
    for pkg in ("", "relax", "relax/transform"):
        (fake_root / pkg).mkdir(parents=True, exist_ok=True)
        (fake_root / pkg / "__init__.py").write_text("")
    (fake_root / "relax" / "transform" / "fold_constant.py").write_text("")
    (fake_root / "relax" / "expr.py").write_text("")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", fake_root)
    core = fake_root / "relax" / "block_builder.py"
    core.write_text("def normalize(x):\n"
                    "    from rvm.relax.transform.fold_constant import FoldConstant\n"
                    "    return FoldConstant()(x)\n")
    found = list(_violations(core))
    assert any("package 'relax' may not import 'rvm.relax.transform.fold_constant'" in v
               and ":2:" in v for v in found), found
    user = fake_root / "relax" / "transform" / "fuse_ops.py"
    user.write_text("from rvm.relax.expr import Call\n")
    assert list(_violations(user)) == []


def test_design_md_states_the_table_this_test_enforces():
    text = (ROOT.parent / "DESIGN.md").read_text(encoding="utf-8")
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`") and cells[0] != "`unit (`rvm.`)`":
            allowed = set(re.findall(r"`([\w.]+)`", cells[2]))
            rows[cells[0].strip("`")] = allowed
    assert rows == ALLOWED
