"""The call graph of an executable's VM functions, and which of them may recurse.

A function may recurse when it lies on a cycle of calls (closures it makes
count as calls): in a strongly connected component of more than one function,
or calling itself. Components are found by Tarjan's algorithm run with an
explicit stack, so the cost is linear in functions plus calls and a chain of
any length cannot exhaust Python's recursion limit.

>>> sorted(functions_on_cycles({0: {1}, 1: {0}, 2: {2}, 3: {0}}))
[0, 1, 2]
"""
from rvm.bytecode.contract import CALL, ArgKind
from rvm.bytecode.function import FuncKind


def vm_callees(ex, info, vm_functions):
    """Indices of the VM functions (among the set ``vm_functions``) ``info`` calls or makes
    closures of."""
    out = set()
    for instr in ex.instructions[info.start:info.end]:
        if instr.op is not CALL:
            continue
        _, func, args = instr.fields
        out.add(func)
        out.update(a.value for a in args if a.kind == ArgKind.FUNC)
    return out & vm_functions


def functions_on_cycles(graph):
    """The nodes of ``graph`` ({node: successors}) that lie on a cycle.

    Iterative Tarjan: each node and edge is visited once.
    """
    index, low, on_stack = {}, {}, set()
    stack, out = [], set()
    for root in graph:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(graph[root]))]
        while work:
            node, succs = work[-1]
            for succ in succs:
                if succ not in graph:
                    continue
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(graph[succ])))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1 or node in graph[node]:
                        out.update(component)
    return out


def recursive_functions(ex):
    """Indices of the VM functions of ``ex`` on a cycle of the call graph."""
    vm_functions = {i for i, f in enumerate(ex.func_table) if f.kind == FuncKind.VM}
    graph = {i: vm_callees(ex, ex.func_table[i], vm_functions) for i in vm_functions}
    return functions_on_cycles(graph)
