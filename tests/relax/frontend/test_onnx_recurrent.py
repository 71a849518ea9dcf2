"""ONNX RNN, GRU and LSTM, unrolled: GRU's linear_before_reset (which the bundled node
tests leave out), bias and both directions match onnx's reference evaluator; a sequence
length known only at run time and an unknown activation are refused by name."""
import numpy as np
import pytest

import rvm
from rvm import relax

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from rvm.relax.frontend.onnx import OnnxImportError, from_onnx  # noqa: E402

pytestmark = pytest.mark.frontend


def _model(op, seq, gates, dirs=1, **attrs):
    hidden, feat, batch = 3, 2, 2
    outputs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    node = helper.make_node(op, ["X", "W", "R", "B"], outputs, hidden_size=hidden, **attrs)
    inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, [seq, batch, feat]),
              helper.make_tensor_value_info("W", TensorProto.FLOAT,
                                            [dirs, gates * hidden, feat]),
              helper.make_tensor_value_info("R", TensorProto.FLOAT,
                                            [dirs, gates * hidden, hidden]),
              helper.make_tensor_value_info("B", TensorProto.FLOAT, [dirs, 2 * gates * hidden])]
    graph = helper.make_graph([node], "g", inputs, [
        helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])


def _feeds(model, rng):
    out = {}
    for value in model.graph.input:
        shape = [d.dim_value for d in value.type.tensor_type.shape.dim]
        out[value.name] = rng.standard_normal(shape).astype("float32")
    return out


@pytest.mark.parametrize("op, gates, attrs", [
    ("GRU", 3, {"linear_before_reset": 1}),
    ("GRU", 3, {"direction": "bidirectional"}),
    ("LSTM", 4, {"direction": "reverse"}),
    ("RNN", 1, {"direction": "bidirectional"}),
])
def test_recurrent_layers_match_the_reference(op, gates, attrs):
    dirs = 2 if attrs.get("direction") == "bidirectional" else 1
    model = _model(op, 4, gates, dirs, **attrs)
    feeds = _feeds(model, np.random.default_rng(1))
    vm = relax.VirtualMachine(relax.build(from_onnx(model)), rvm.cpu())
    got = vm["main"](*feeds.values())
    for g, w in zip(got, ReferenceEvaluator(model).run(None, feeds)):
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-5, atol=1e-6)


def test_an_unknown_activation_is_refused_by_name():
    model = _model("RNN", 2, 1, activations=["Swoosh"])
    with pytest.raises(OnnxImportError, match="activation 'Swoosh' is not an operator"):
        from_onnx(model)


def test_a_sequence_length_known_only_at_run_time_is_refused():
    with pytest.raises(OnnxImportError, match="GRU's sequence length must be static, got T"):
        from_onnx(_model("GRU", "T", 3))
