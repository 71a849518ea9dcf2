"""from_onnx on tensors with a zero-size dimension: the model builds for the C target
(no index computation divides by the zero extent) and runs on both VM engines, giving
the empty result onnx's reference evaluator gives."""
import numpy as np
import pytest

import rvm
from rvm import relax

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from rvm.relax.frontend.onnx import from_onnx  # noqa: E402

pytestmark = pytest.mark.frontend


@pytest.mark.parametrize("upper", [0, 1])
def test_trilu_of_a_zero_size_tensor_builds_and_runs(upper):
    node = helper.make_node("Trilu", ["x", "k"], ["y"], upper=upper)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 0, 5]),
                      helper.make_tensor_value_info("k", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    x, k = np.zeros((3, 0, 5), "float32"), np.array(1)
    want = ReferenceEvaluator(model).run(None, {"x": x, "k": k})[0]
    ex = relax.build(from_onnx(model), target="c")
    for engine in ("python", "native"):
        got = relax.VirtualMachine(ex, rvm.cpu(), engine=engine)["main"](x, k).numpy()
        assert got.shape == want.shape == (3, 0, 5) and got.dtype == want.dtype
