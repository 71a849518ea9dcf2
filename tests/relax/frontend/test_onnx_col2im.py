"""from_onnx's Col2Im with image_shape and block_shape fed at run time (one compiled
model for several shapes), with strides, dilations and pads, against onnxruntime and
onnx's reference evaluator on both VM engines; a block shape that does not fit the input
is refused at run time with a named error."""
import numpy as np
import pytest

import rvm
from rvm import relax

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402
ort = pytest.importorskip("onnxruntime")

from rvm.relax.frontend.onnx import from_onnx  # noqa: E402

pytestmark = pytest.mark.frontend

ENGINES = ("python", "native")


def _model(shape, **attrs):
    node = helper.make_node("Col2Im", ["x", "image", "block"], ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape)),
         helper.make_tensor_value_info("image", TensorProto.INT64, [2]),
         helper.make_tensor_value_info("block", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _machines(model):
    ex = relax.build(from_onnx(model), target="c")
    return [relax.VirtualMachine(ex, rvm.cpu(), engine=e) for e in ENGINES]


def test_col2im_fed_at_run_time_matches_onnxruntime():
    # 12 columns of 6 positions: 3 channels of 2x2 blocks over 2x3 positions, or
    # 1 channel of 3x4 blocks over the same positions
    attrs = {"strides": [1, 2], "dilations": [2, 1], "pads": [1, 0, 0, 1]}
    model = _model([2, 12, 6], **attrs)
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    reference = ReferenceEvaluator(model)
    x = np.random.default_rng(0).standard_normal((2, 12, 6)).astype("float32")
    machines = _machines(model)
    for image, block in (([3, 5], [2, 2]), ([5, 7], [3, 4])):
        feeds = {"x": x, "image": np.array(image), "block": np.array(block)}
        want = session.run(None, feeds)[0]
        np.testing.assert_allclose(reference.run(None, feeds)[0], want, rtol=1e-5, atol=1e-6)
        for vm in machines:
            got = vm["main"](*feeds.values()).numpy()
            assert got.shape == want.shape, (image, block)
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_a_block_shape_that_does_not_fit_is_refused():
    x = np.ones((1, 4, 4), "float32")
    for vm in _machines(_model(x.shape)):
        vm["main"](x, np.array([3, 3]), np.array([2, 2]))  # 1 channel, 2x2 positions
        with pytest.raises(ValueError, match="col2im_blocks_match_the_input_length"):
            vm["main"](x, np.array([4, 4]), np.array([2, 2]))  # 3x3 positions, not 4
        with pytest.raises(ValueError, match="col2im_blocks_match_the_input_length"):
            vm["main"](x, np.array([3, 3]), np.array([0, 2]))
        with pytest.raises(ValueError, match="col2im_block_shape_divides_the_channels"):
            vm["main"](x, np.array([4, 3]), np.array([1, 3]))  # 4 columns, blocks of 3
