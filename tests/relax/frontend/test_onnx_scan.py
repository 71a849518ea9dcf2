"""ONNX Scan, unrolled over a static sequence length: directions and axes of inputs and
outputs match a numpy loop; a sequence length known only at run time is
refused by name."""
import numpy as np
import pytest

import rvm
from rvm import relax

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

from rvm.relax.frontend.onnx import OnnxImportError, from_onnx  # noqa: E402

pytestmark = pytest.mark.frontend


def _cumulative_model(length, **attrs):
    """state' = state + x_t; scan output y_t = state' * 2 (x scanned along axis 1)."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s", "x"], ["s2"]),
         helper.make_node("Add", ["s2", "s2"], ["y"])], "body",
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("s2", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    node = helper.make_node("Scan", ["init", "xs"], ["final", "ys"], body=body,
                            num_scan_inputs=1, scan_input_axes=[1], **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("init", TensorProto.FLOAT, [3]),
                      helper.make_tensor_value_info("xs", TensorProto.FLOAT, [3, length])],
        [helper.make_tensor_value_info("final", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("ys", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])


@pytest.mark.parametrize("attrs", [{}, {"scan_input_directions": [1]},
                                   {"scan_output_directions": [1], "scan_output_axes": [1]}])
def test_scan_matches_the_reference(attrs):
    model = _cumulative_model(4, **attrs)
    feeds = {"init": np.arange(3, dtype="float32"),
             "xs": np.random.default_rng(0).standard_normal((3, 4)).astype("float32")}
    vm = relax.VirtualMachine(relax.build(from_onnx(model)), rvm.cpu())
    final, ys = vm["main"](*feeds.values())
    state, ys_want = feeds["init"], []
    steps = range(3, -1, -1) if attrs.get("scan_input_directions") else range(4)
    for t in steps:
        state = state + feeds["xs"][:, t]
        ys_want.append(state * 2)
    if attrs.get("scan_output_directions"):
        ys_want = ys_want[::-1]
    ys_want = np.stack(ys_want, axis=attrs.get("scan_output_axes", [0])[0])
    np.testing.assert_allclose(final.numpy(), state, rtol=1e-6)
    np.testing.assert_allclose(ys.numpy(), ys_want, rtol=1e-6)


def test_a_sequence_length_known_only_at_run_time_is_refused():
    model = _cumulative_model("n")
    with pytest.raises(OnnxImportError, match="Scan's sequence length must be static, got n"):
        from_onnx(model)
