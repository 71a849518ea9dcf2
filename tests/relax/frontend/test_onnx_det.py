"""from_onnx's Det against onnxruntime and numpy on both VM engines: batched matrices that
need row swaps (a zero leading element), singular ones, 1 x 1 and 5 x 5; a matrix too
large to unroll and a non-square one are refused at import."""
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


def _model(shape):
    node = helper.make_node("Det", ["x"], ["y"])
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])


@pytest.mark.parametrize("shape", [(4, 3, 3), (2, 1, 1), (5, 5)])
def test_det_matches_onnxruntime(shape):
    x = np.random.default_rng(1).standard_normal(shape).astype("float32")
    if shape == (4, 3, 3):
        x[0, 0, 0] = 0.0                  # the first pivot needs a row swap
        x[1, 2] = 2 * x[1, 0]             # singular
        x[2] = np.eye(3)[[2, 0, 1]] * 3   # a permutation: swaps only
    model = _model(shape)
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    want = session.run(None, {"x": x})[0]
    np.testing.assert_allclose(want, np.linalg.det(x), rtol=1e-4, atol=1e-5)
    ex = relax.build(from_onnx(model), target="c")
    for engine in ENGINES:
        got = relax.VirtualMachine(ex, rvm.cpu(), engine=engine)["main"](x).numpy()
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_matrices_it_cannot_unroll_or_that_are_not_square_are_refused():
    with pytest.raises(Exception, match=r"up to 16 x 16, got 17 x 17"):
        from_onnx(_model((17, 17)))
    with pytest.raises(Exception, match=r"Det expects float square matrices"):
        from_onnx(_model((2, 3)))
