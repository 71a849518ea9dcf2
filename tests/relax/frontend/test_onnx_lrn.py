"""from_onnx's LRN: values against onnxruntime (rank 4, odd window sizes: it refuses others) and
the operator's formula (every size) on both VM engines, a window wider than the channels,
ranks 3 to 5, and a bad size refused at import.
(onnx's reference evaluator takes rank 4 only and loops its channels over the batch
extent, so it is right only where the two are equal, as in onnx's own node tests.)"""
import numpy as np
import pytest

import rvm
from rvm import relax

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
ort = pytest.importorskip("onnxruntime")

from rvm.relax.frontend.onnx import from_onnx  # noqa: E402

pytestmark = pytest.mark.frontend


def _model(shape, **attrs):
    node = helper.make_node("LRN", ["x"], ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _formula(x, size, alpha=1e-4, beta=0.75, bias=1.0):
    """onnx's definition: the squares summed over channels [c - floor((size - 1) / 2),
    c + ceil((size - 1) / 2)] that exist."""
    total = np.zeros(x.shape, "float64")
    for c in range(x.shape[1]):
        lo, hi = max(0, c - (size - 1) // 2), min(x.shape[1], c + size // 2 + 1)
        total[:, c] = (x[:, lo:hi].astype("float64") ** 2).sum(axis=1)
    return x / (bias + alpha / size * total) ** beta


@pytest.mark.parametrize("shape, attrs", [
    ([2, 5, 3, 4], {"size": 3}),
    ([1, 6, 4], {"size": 4, "alpha": 0.01, "beta": 0.5, "bias": 2.0}),
    ([1, 3, 2, 2, 2], {"size": 4}),
    ([1, 3, 2, 2], {"size": 7}),
])
def test_lrn_matches_the_reference(shape, attrs):
    model = _model(shape, **attrs)
    x = np.random.default_rng(0).standard_normal(shape).astype("float32") * 3
    want = _formula(x, **attrs)
    if attrs["size"] % 2 and len(shape) == 4:
        session = ort.InferenceSession(model.SerializeToString(),
                                       providers=["CPUExecutionProvider"])
        np.testing.assert_allclose(session.run(None, {"x": x})[0], want, rtol=1e-5)
    ex = relax.build(from_onnx(model), target="c")
    for engine in ("python", "native"):
        got = relax.VirtualMachine(ex, rvm.cpu(), engine=engine)["main"](x).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_a_size_below_one_is_refused():
    with pytest.raises(Exception, match=r"LRN's size must be an integer >= 1, got 0"):
        from_onnx(_model([1, 3, 2, 2], size=0))
