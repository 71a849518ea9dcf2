"""ONNX GridSample: each mode and padding (with grid values far outside the input, where
reflection folds several times) matches onnx's reference evaluator; wrong grids are
refused by name."""
import numpy as np
import pytest

import rvm
from rvm import relax

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from rvm.relax.frontend.onnx import OnnxImportError, from_onnx  # noqa: E402

pytestmark = pytest.mark.frontend


def _model(x_shape, grid_shape, **attrs):
    node = helper.make_node("GridSample", ["x", "grid"], ["y"], **attrs)
    graph = helper.make_graph([node], "g", [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape),
        helper.make_tensor_value_info("grid", TensorProto.FLOAT, grid_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])


@pytest.mark.parametrize("mode, padding", [("nearest", "reflection"), ("linear", "zeros"),
                                           ("cubic", "reflection"), ("cubic", "border")])
def test_grid_sample_matches_the_reference(mode, padding):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 2, 3, 4)).astype("float32")
    grid = (rng.standard_normal((2, 3, 2, 2)) * 2.5).astype("float32")  # beyond [-1, 1]
    model = _model([2, 2, 3, 4], [2, 3, 2, 2], mode=mode, padding_mode=padding,
                   align_corners=int(padding == "border"))
    vm = relax.VirtualMachine(relax.build(from_onnx(model)), rvm.cpu())
    want, = ReferenceEvaluator(model).run(None, {"x": x, "grid": grid})
    np.testing.assert_allclose(vm["main"](x, grid).numpy(), want, rtol=1e-4, atol=1e-5)


def test_a_grid_of_the_wrong_rank_is_refused():
    with pytest.raises(OnnxImportError, match="GridSample's grid must be \\[N, 2 spatial"):
        from_onnx(_model([1, 1, 3, 4], [1, 3, 2, 3]))
