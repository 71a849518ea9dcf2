"""from_onnx's RoiAlign (avg and max, half_pixel and output_half_pixel, regions partly
outside the image) against onnxruntime on both VM engines; a batch index naming no
image is refused at run time, sampling_ratio 0 at import."""
import numpy as np
import pytest

import rvm
from rvm import relax

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
ort = pytest.importorskip("onnxruntime")

from rvm.relax.frontend.onnx import from_onnx  # noqa: E402

pytestmark = pytest.mark.frontend

ENGINES = ("python", "native")
X = np.random.default_rng(0).standard_normal((2, 3, 8, 9)).astype("float32")
ROIS = np.array([[0.5, 1.0, 6.0, 7.5], [-3.0, -2.0, 2.0, 3.0], [7.0, 5.0, 12.0, 10.0],
                 [2.0, 2.0, 2.2, 2.1]], "float32")
BATCH = np.array([0, 1, 1, 0], "int64")


def _model(**attrs):
    node = helper.make_node("RoiAlign", ["x", "rois", "batch"], ["y"], output_height=3,
                            output_width=2, **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(X.shape)),
         helper.make_tensor_value_info("rois", TensorProto.FLOAT, list(ROIS.shape)),
         helper.make_tensor_value_info("batch", TensorProto.INT64, list(BATCH.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])


def _machines(model):
    ex = relax.build(from_onnx(model), target="c")
    return [relax.VirtualMachine(ex, rvm.cpu(), engine=e) for e in ENGINES]


@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("transform", ["half_pixel", "output_half_pixel"])
def test_roi_align_matches_onnxruntime(mode, transform):
    model = _model(mode=mode, coordinate_transformation_mode=transform, sampling_ratio=2,
                   spatial_scale=0.8)
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    want = session.run(None, {"x": X, "rois": ROIS, "batch": BATCH})[0]
    for vm in _machines(model):
        got = vm["main"](X, ROIS, BATCH).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_bad_batch_indices_and_sampling_ratio_are_refused():
    for vm in _machines(_model(sampling_ratio=1)):
        with pytest.raises(ValueError, match="roi_align_batch_indices_within_the_input"):
            vm["main"](X, ROIS, np.array([0, 2, 0, 0], "int64"))
    with pytest.raises(Exception, match="RoiAlign supports a sampling_ratio >= 1"):
        from_onnx(_model(sampling_ratio=0))
