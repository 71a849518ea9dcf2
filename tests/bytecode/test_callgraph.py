"""Which VM functions may recurse: the iterative SCC of rvm.bytecode.callgraph, against the
search-from-every-node definition it replaced, and through the verifier's frame budget."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rvm.bytecode.builder import ExecBuilder
from rvm.bytecode.callgraph import functions_on_cycles, recursive_functions
from rvm.bytecode.contract import CALL, RET, ArgKind
from rvm.bytecode.errors import BytecodeVerificationError
from rvm.bytecode.executable import Executable
from rvm.bytecode.function import FuncInfo, FuncKind
from rvm.bytecode.instruction import Arg, Instruction
from rvm.support.recursion import DEPTH


def on_a_cycle_by_search(graph):
    """The definition: nodes from which a search returns to the node itself."""
    out = set()
    for start in graph:
        seen, stack = set(), list(graph[start])
        while stack:
            node = stack.pop()
            if node == start:
                out.add(start)
                break
            if node not in seen:
                seen.add(node)
                stack.extend(graph.get(node, ()))
    return out


def test_self_and_mutual_recursion():
    assert functions_on_cycles({0: {0}, 1: set()}) == {0}
    assert functions_on_cycles({0: {1}, 1: {2}, 2: {0}, 3: {0}}) == {0, 1, 2}
    # a diamond has no cycle; edges to nodes outside the graph are ignored
    assert functions_on_cycles({0: {1, 2}, 1: {3}, 2: {3}, 3: {9}}) == set()


def test_two_cycles_joined_by_a_one_way_edge_stay_apart():
    graph = {0: {1}, 1: {0, 2}, 2: {3}, 3: {2}, 4: {0, 2}}
    assert functions_on_cycles(graph) == {0, 1, 2, 3}
    graph[3] = {4}  # now 2 -> 3 -> 4 -> 0 -> 1 -> 2: one component with 4 in it
    assert functions_on_cycles(graph) == {0, 1, 2, 3, 4}


def _chain(n, closed):
    chain = {i: {i + 1} for i in range(n - 1)}
    chain[n - 1] = {0} if closed else set()
    return chain


def test_a_long_chain_needs_no_recursion():
    # far past Python's recursion limit, and three times the one rvm raises it to for IR
    # walks (rvm.support.recursion.DEPTH)
    n = 3 * DEPTH
    assert functions_on_cycles(_chain(n, False)) == set()
    assert len(functions_on_cycles(_chain(n, True))) == n  # closed: every node on the cycle


class _CountingGraph(dict):
    """A graph that counts how often its successor sets are read."""

    reads = 0

    def __getitem__(self, node):
        self.reads += 1
        return super().__getitem__(node)


def test_each_node_is_expanded_a_bounded_number_of_times():
    # Linear work: a search from every node (the old verifier) reads n^2 / 2 sets here.
    for n in (1_000, 20_000):
        graph = _CountingGraph(_chain(n, True))
        assert len(functions_on_cycles(graph)) == n
        assert graph.reads <= 3 * n, (n, graph.reads)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 12).flatmap(lambda n: st.lists(
    st.sets(st.integers(0, n - 1), max_size=4), min_size=n, max_size=n)))
def test_agrees_with_the_search_from_every_node(edges):
    graph = dict(enumerate(edges))
    assert functions_on_cycles(graph) == on_a_cycle_by_search(graph)


def _chain_executable(n, close=False, closure=False):
    """f0 -> f1 -> ... -> f(n-1); ``close``: the last calls f0 back, by a call or, with
    ``closure``, by making a closure of it."""
    table, code = [], []
    for i in range(n):
        start = len(code)
        target = i + 1 if i + 1 < n else (0 if close else None)
        if target is None:
            code.append(Instruction(RET, (0,)))
        elif closure and i == n - 1:
            code += [Instruction(CALL, (1, n, (Arg(ArgKind.FUNC, target), Arg(ArgKind.REG, 0)))),
                     Instruction(RET, (1,))]
        else:
            code += [Instruction(CALL, (1, target, (Arg(ArgKind.REG, 0),))),
                     Instruction(RET, (1,))]
        table.append(FuncInfo(FuncKind.VM, f"f{i}", start, len(code), 1, 2, ("x",)))
    table.append(FuncInfo(FuncKind.PACKED, "vm.builtin.make_closure"))
    return Executable(table, [], code)


def test_recursion_found_through_a_long_chain_of_calls_and_a_closure():
    assert recursive_functions(_chain_executable(5000)) == set()
    assert recursive_functions(_chain_executable(5000, close=True)) == set(range(5000))
    assert recursive_functions(_chain_executable(50, close=True, closure=True)) == set(range(50))


def test_the_frame_budget_applies_to_a_function_recursing_through_others():
    ex = _chain_executable(3, close=True)
    table = [f._replace(num_regs=5000) if f.name == "f1" else f for f in ex.func_table]
    with pytest.raises(BytecodeVerificationError, match="function 'f1': may recurse with 5000"):
        Executable(table, [], ex.instructions)
    ex = _chain_executable(3)
    Executable(table[:2] + [ex.func_table[2], table[3]], [], ex.instructions)


def test_builder_self_recursion():
    ib = ExecBuilder()
    with ib.function("f", num_inputs=1):
        ib.emit_call("f", args=[ib.r(0)], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    with ib.function("g", num_inputs=1):
        ib.emit_call("f", args=[ib.r(0)], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    ex = ib.get()
    assert recursive_functions(ex) == {ex.func_map["f"]}
