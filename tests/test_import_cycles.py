"""No import cycles among rvm's modules (DESIGN.md, "Layers").

The graph has one node per module and an edge for every import that the layering test's
scanner finds: statements at the top of a file or inside a function, and module names in
strings (``importlib.import_module``). ``from rvm.tir import op`` is an edge to the module
``rvm.tir.op``; ``from rvm.tir import Var`` is one to the package ``rvm.tir`` (its
``__init__``). Python runs a package's ``__init__`` before any of its modules, but that
implicit edge is not drawn: every package re-exporting its modules would otherwise be a
cycle with each of them. A cycle is a strongly connected component of more than one module.
"""
import sys

from tests import test_layering as layering

# Cycles still allowed, each the set of modules of one component (a component found must lie
# inside one entry); at most 3, each with the reason it remains.
# Cycles tolerated, each with why (at most 3): none today.
ALLOWED_CYCLES = []


def import_graph():
    """{module: {imported module: line of the first such import}} over the rvm tree."""
    graph = {}
    for path in layering._sources():
        name = layering._module_name(path)
        edges = graph.setdefault(name, {})
        for line, module, names in layering._imports(path):
            if module != "rvm" and not module.startswith("rvm."):
                continue
            targets = [f"{module}.{n}" for n in names if layering._is_module(f"{module}.{n}")]
            if len(targets) < len(names) or not names:
                targets.append(module)  # names defined by the module (or package) itself
            for target in targets:
                if target != name and layering._is_module(target):
                    edges.setdefault(target, line)
    return graph


def cycles(graph):
    """The strongly connected components of more than one module (Tarjan), sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in graph.get(node, ()):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(component)

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph) + 100))
    try:
        for node in sorted(graph):
            if node not in index:
                visit(node)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(found, key=lambda c: sorted(c))


def describe(graph, component):
    """One loop through ``component``, as ``module:line -> module`` steps."""
    start = min(component)
    paths = {start: []}
    queue = [start]
    while queue:  # breadth-first, inside the component, back to ``start``
        node = queue.pop(0)
        for succ, line in sorted(graph[node].items()):
            if succ not in component:
                continue
            step = paths[node] + [f"{node}:{line} -> {succ}"]
            if succ == start:
                return "\n    ".join(step)
            if succ not in paths:
                paths[succ] = step
                queue.append(succ)
    return ", ".join(sorted(component))


def unexpected_cycles(graph, allowed):
    return [c for c in cycles(graph) if not any(c <= entry for entry in allowed)]


def test_allow_list_is_short():
    assert len(ALLOWED_CYCLES) <= 3


def test_no_import_cycles():
    graph = import_graph()
    found = unexpected_cycles(graph, ALLOWED_CYCLES)
    assert not found, "import cycles:\n" + "\n".join(
        f"  {len(c)} modules: {describe(graph, c)}" for c in found)


def _fake_tree(tmp_path, files):
    root = tmp_path / "rvm"
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_finds_a_cycle_held_by_a_function_level_import(tmp_path, monkeypatch):
    """The circle of a bottom-of-file or in-function import is found, with the lines."""
    root = _fake_tree(tmp_path, {
        "__init__.py": "",
        "tir/__init__.py": "from rvm.tir.expr import Var\n",
        "tir/expr.py": "class Var:\n    pass\n\n\nfrom rvm.tir import op as _op\n",
        "tir/op.py": "def add(a, b):\n    from rvm.tir.printer import text\n    return text\n",
        "tir/printer.py": "from rvm.tir.expr import Var\n",
        "tir/stmt.py": "from rvm.tir import Var\n",
    })
    monkeypatch.setattr(layering, "ROOT", root)
    graph = import_graph()
    found = cycles(graph)
    assert found == [{"rvm.tir.expr", "rvm.tir.op", "rvm.tir.printer"}]
    assert describe(graph, found[0]) == ("rvm.tir.expr:5 -> rvm.tir.op\n"
                                         "    rvm.tir.op:2 -> rvm.tir.printer\n"
                                         "    rvm.tir.printer:1 -> rvm.tir.expr")
    assert unexpected_cycles(graph, [{"rvm.tir.expr", "rvm.tir.op"}]) == found
    assert unexpected_cycles(graph, [found[0] | {"rvm.tir.stmt"}]) == []


def test_finds_a_cycle_through_a_package_init_and_a_string(tmp_path, monkeypatch):
    """A module importing its package's facade, which imports it back, is a cycle; so is one
    closed by ``importlib.import_module("rvm....")``."""
    root = _fake_tree(tmp_path, {
        "__init__.py": "",
        "relax/__init__.py": "from rvm.relax.expr import Var\n",
        "relax/expr.py": "from rvm.relax import struct_info\nVar = 1\n",
        "relax/struct_info.py": "from rvm.relax import Var\n",
        "vm/__init__.py": "",
        "vm/a.py": 'import importlib\nB = importlib.import_module("rvm.vm.b")\n',
        "vm/b.py": "import rvm.vm.a\n",
    })
    monkeypatch.setattr(layering, "ROOT", root)
    assert cycles(import_graph()) == [
        {"rvm.relax", "rvm.relax.expr", "rvm.relax.struct_info"}, {"rvm.vm.a", "rvm.vm.b"}]
