"""The ``examplejson`` codegen: subgraphs as the graph text the ExampleJSON runtime executes.

Each Codegen function becomes a section of ``rvm.runtime.example_json``'s
format (``input`` entries, then ``add``/``sub``/``mul`` entries with their
inputs and shape); all of one RunCodegen go into one ExampleJSONModule.
"""
from rvm.codegen.byoc.subgraph import extract_subgraph, register_codegen
from rvm.runtime.example_json import ExampleJSONModule

OPS = {"add": "add", "subtract": "sub", "multiply": "mul", "divide": "div"}


def generate_graph(func):
    """The graph text of one Codegen function."""
    graph = extract_subgraph(func, "examplejson", set(OPS))
    dtypes = {d for _, _, d in graph.inputs} | {n.dtype for n in graph.nodes}
    if dtypes != {"float32"}:
        raise ValueError(f"examplejson: subgraph '{graph.name}' uses {sorted(dtypes)}; only "
                         "float32 is supported")
    lines = [graph.name]
    for ident, shape, _ in graph.inputs:
        lines.append(f"  input {ident} {' '.join(map(str, shape))}".rstrip())
    for node in graph.nodes:
        lines.append(f"  {OPS[node.op]} {node.id} inputs: {' '.join(map(str, node.inputs))} "
                     f"shape: {' '.join(map(str, node.shape))}".rstrip())
    last = graph.nodes[-1].id if graph.nodes else graph.inputs[-1][0]
    if graph.outputs != [last]:
        lines.append(f"  output {' '.join(map(str, graph.outputs))}")
    return "\n".join(lines) + "\n"


@register_codegen("examplejson")
def examplejson_codegen(functions, options=None, constant_names=None):
    """RunCodegen's entry for ``Codegen="examplejson"``: one ExampleJSONModule."""
    return [ExampleJSONModule("".join(generate_graph(f) for f in functions))]
