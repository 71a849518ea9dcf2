"""The ExampleJSON runtime module: parsing graph text, running subgraphs, bytes."""
import doctest

import numpy as np
import pytest

from rvm.runtime import example_json
from rvm.runtime.example_json import ExampleJSONModule, load_example_json
from rvm.runtime.module import load_module_from_bytes

GRAPH = """subgraph_0
  input 0 2 2
  input 1 2 2
  input 2 2 2
  add 3 inputs: 0 1 shape: 2 2
  sub 4 inputs: 3 2 shape: 2 2
  mul 5 inputs: 4 1 shape: 2 2
subgraph_1
  input 0 3
  input 1 3
  div 2 inputs: 0 1 shape: 3
  add 3 inputs: 2 1 shape: 3
  output 2 3
"""


def test_docstring_examples():
    assert doctest.testmod(example_json).failed == 0


def test_subgraphs_run_and_survive_bytes():
    mod = load_module_from_bytes("examplejson", ExampleJSONModule(GRAPH).save_to_bytes())
    assert sorted(mod.function_names()) == ["subgraph_0", "subgraph_1"]
    a, b, c = (np.full((2, 2), v, "float32") for v in (1, 2, 5))
    out = np.empty((2, 2), "float32")
    mod["subgraph_0"](a, b, c, out)
    np.testing.assert_array_equal(out, ((a + b) - c) * b)
    x, y = np.array([2, 4, 6], "float32"), np.array([2, 2, 2], "float32")
    q, s = np.empty(3, "float32"), np.empty(3, "float32")
    mod["subgraph_1"](x, y, q, s)
    np.testing.assert_array_equal(q, x / y)
    np.testing.assert_array_equal(s, x / y + y)


@pytest.mark.parametrize("text, message", [
    ("  input 0 2\n", "an entry before any subgraph name"),
    ("g\n  input 0 2\n  pow 1 inputs: 0 0 shape: 2\n", "unknown entry 'pow'"),
    ("g\n  input 0 2\n  add 1 inputs: 0 7 shape: 2\n", "input 7 is not defined"),
    ("g\n  input 0 2\n  add 1 inputs: 0 0 shape: 3\n", "input 0 has shape"),
    ("g\n  input 0 2\n  input 0 2\n", "id 0 is defined twice"),
    ("g\n  input 0 x\n", "must be integers"),
    ("g\n  input 0 2\n  add 1 0 0 2\n", "expected 'add <id> inputs:"),
    ("g\n  input 0 2\n  output 5\n", "undefined: \\[5\\]"),
    ("g\n  input 0 99999 99999 99999\n", "too large"),
    ("g\nh\n", "subgraph 'g' has no inputs"),
    ("g h\n  input 0 1\n", "expected a new subgraph name"),
])
def test_bad_graph_text_names_the_line(text, message):
    with pytest.raises(ValueError, match=message):
        ExampleJSONModule(text)


def test_bad_calls_and_bytes_are_refused():
    mod = ExampleJSONModule(GRAPH)
    with pytest.raises(ValueError, match="expects 3 inputs and 1 output tensors, got 2"):
        mod["subgraph_0"](np.zeros((2, 2), "float32"), np.zeros((2, 2), "float32"))
    bad = [np.zeros((2, 2), "float64")] + [np.zeros((2, 2), "float32")] * 3
    with pytest.raises(ValueError, match=r"input 0 expects float32\[2, 2\], got float64"):
        mod["subgraph_0"](*bad)
    with pytest.raises(ValueError, match="not UTF-8"):
        load_example_json(b"\xff\xfe")
