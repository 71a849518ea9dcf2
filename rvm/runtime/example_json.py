"""The ExampleJSON runtime: a module that executes subgraphs given as a small graph text.

It is the runtime half of the ``examplejson`` codegen (seed 002's example of
a codegen whose output is a graph description run by its own runtime). The
text holds one section per subgraph: the subgraph's name on a line of its
own, then indented entries, one per value, in dependency order::

    fused_relax_add_relax_subtract
      input 0 10 10
      input 1 10 10
      add 2 inputs: 0 1 shape: 10 10
      sub 3 inputs: 2 1 shape: 10 10

``input <id> <dims>`` is the next argument; ``<op> <id> inputs: <ids> shape:
<dims>`` computes ``op`` (add, sub, mul, div) of earlier entries; the last
entry is the result unless an ``output <ids>`` entry names the results.
Calling a subgraph takes its inputs and then one output tensor per result,
which it fills (float32 throughout). The module saves itself as that
text and is restored from it by its registered loader; loading only parses.

>>> mod = ExampleJSONModule("g\\n  input 0 2\\n  input 1 2\\n  mul 2 inputs: 0 1 shape: 2\\n")
>>> import numpy as np
>>> out = np.zeros(2, "float32")
>>> mod["g"](np.array([1, 2], "float32"), np.array([3, 4], "float32"), out)
>>> out
array([3., 8.], dtype=float32)
"""
import numpy as np

from rvm.runtime.module import Module, register_module_loader

OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}
DTYPE = "float32"
_MAX_DIMS = 8
_MAX_ELEMENTS = 1 << 31


class _Subgraph:
    """The parsed entries of one subgraph: inputs (id, shape) and nodes (op, id, ins, shape)."""

    def __init__(self, name):
        self.name = name
        self.inputs = []
        self.nodes = []
        self.shapes = {}
        self.outputs = None

    def add_entry(self, words, line_no):
        def error(message):
            return ValueError(f"examplejson: line {line_no} ({' '.join(words)}): {message}")

        def ints(values, what):
            try:
                out = [int(v) for v in values]
            except ValueError:
                raise error(f"{what} must be integers") from None
            if any(v < 0 for v in out):
                raise error(f"{what} must be non-negative")
            return out

        if self.outputs is not None:
            raise error("entries after the 'output' entry")
        if words[0] == "output":
            self.outputs = ints(words[1:], "output ids")
            missing = [i for i in self.outputs if i not in self.shapes]
            if not self.outputs or missing:
                raise error(f"expected 'output <ids>' of defined entries; undefined: {missing}")
            return
        if words[0] == "input":
            if len(words) < 2:
                raise error("expected 'input <id> <dims>'")
            ident, *shape = ints(words[1:], "id and dims")
            self._define(ident, shape, error)
            self.inputs.append((ident, tuple(shape)))
            return
        if words[0] not in OPS:
            raise error(f"unknown entry '{words[0]}'; expected input or one of "
                        f"{', '.join(OPS)}")
        if "inputs:" not in words or "shape:" not in words or words.index("inputs:") != 2 or \
                words.index("shape:") < 3:
            raise error(f"expected '{words[0]} <id> inputs: <ids> shape: <dims>'")
        (ident,) = ints(words[1:2], "the id")
        cut = words.index("shape:")
        ins = ints(words[3:cut], "input ids")
        shape = ints(words[cut + 1:], "dims")
        if len(ins) != 2:
            raise error(f"'{words[0]}' takes 2 inputs, got {len(ins)}")
        for i in ins:
            if i not in self.shapes:
                raise error(f"input {i} is not defined before this entry")
            if self.shapes[i] != tuple(shape):
                raise error(f"input {i} has shape {list(self.shapes[i])}, this entry "
                            f"{list(shape)}")
        self._define(ident, shape, error)
        self.nodes.append((words[0], ident, ins, tuple(shape)))

    def _define(self, ident, shape, error):
        if ident in self.shapes:
            raise error(f"id {ident} is defined twice")
        if len(shape) > _MAX_DIMS or int(np.prod(shape, dtype=np.int64)) > _MAX_ELEMENTS:
            raise error(f"shape {shape} is too large")
        self.shapes[ident] = tuple(shape)

    def __call__(self, *args):
        results = self.result_ids()
        if len(args) != len(self.inputs) + len(results):
            raise ValueError(f"examplejson subgraph '{self.name}' expects {len(self.inputs)} "
                             f"inputs and {len(results)} output tensors, got {len(args)} "
                             "arguments")
        values = {}
        for k, ((ident, shape), arg) in enumerate(zip(self.inputs, args)):
            values[ident] = _view(arg, shape, f"'{self.name}' input {k}")
        outs = [_view(arg, self.shapes[i], f"'{self.name}' output {j}")
                for j, (i, arg) in enumerate(zip(results, args[len(self.inputs):]))]
        for op, ident, ins, shape in self.nodes:
            values[ident] = OPS[op](values[ins[0]], values[ins[1]])
        for ident, out in zip(results, outs):
            out[...] = values[ident]

    def result_ids(self):
        """The ids of the results: the ``output`` entry's, else the last entry's."""
        if self.outputs is not None:
            return self.outputs
        return [self.nodes[-1][1] if self.nodes else self.inputs[-1][0]]


def _view(arg, shape, what):
    array = arg if isinstance(arg, np.ndarray) else np.from_dlpack(arg)
    if array.dtype != np.dtype(DTYPE) or array.shape != tuple(shape):
        raise ValueError(f"examplejson: {what} expects {DTYPE}{list(shape)}, got "
                         f"{array.dtype}{list(array.shape)}")
    return array


def parse_graph(text):
    """{name: subgraph} of the graph text (ValueError naming the line for bad text)."""
    if not isinstance(text, str):
        raise TypeError(f"examplejson: the graph must be text, got {type(text).__name__}")
    graphs, current = {}, None
    for line_no, line in enumerate(text.splitlines(), 1):
        words = line.split()
        if not words:
            continue
        if not line[0].isspace():
            name = line.strip()
            if len(words) != 1 or not name.isidentifier() or name in graphs:
                raise ValueError(f"examplejson: line {line_no}: expected a new subgraph name, "
                                 f"got {name!r}")
            current = graphs[name] = _Subgraph(name)
        elif current is None:
            raise ValueError(f"examplejson: line {line_no}: an entry before any subgraph name")
        else:
            current.add_entry(words, line_no)
    for graph in graphs.values():
        if not graph.inputs:
            raise ValueError(f"examplejson: subgraph '{graph.name}' has no inputs")
    return graphs


class ExampleJSONModule(Module):
    """Runs the subgraphs of an ExampleJSON graph text; each is a function of the module."""

    type_key = "examplejson"

    def __init__(self, graph_json):
        super().__init__()
        self.graph_json = graph_json
        self._graphs = parse_graph(graph_json)

    def _get_own_function(self, name):
        return self._graphs.get(name)

    def _own_function_names(self):
        return list(self._graphs)

    def get_source(self, fmt="examplejson"):
        """The graph text."""
        return self.graph_json

    def save_to_bytes(self):
        """The graph text, UTF-8."""
        return self.graph_json.encode("utf-8")

    def __repr__(self):
        return f"<rvm.runtime.ExampleJSONModule: {', '.join(self._graphs)}>"


def load_example_json(data):
    """An ExampleJSONModule from the bytes ``save_to_bytes`` wrote."""
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"examplejson: the saved graph is not UTF-8 text: {err}") from None
    return ExampleJSONModule(text)


register_module_loader(ExampleJSONModule.type_key, load_example_json)
