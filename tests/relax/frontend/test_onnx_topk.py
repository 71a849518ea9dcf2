"""from_onnx's TopK: values and indices against onnxruntime with ``k`` fed at run time
(one compiled model for every k), along an inner axis, largest and smallest, with ties
(equal values keep their order); a k outside the axis is refused at run time, a k of the
wrong shape at import."""
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
# ties along axis 1: 2.0 three times, -1.0 twice
X = np.array([[[3.0, 2.0, 2.0, -1.0, 2.0, -1.0, 7.0]] * 2,
              [[0.5, 0.5, 0.5, 0.5, 9.0, -3.0, 1.0]] * 2], "float32").transpose(0, 2, 1)


def _model(k_shape=(1,), **attrs):
    node = helper.make_node("TopK", ["x", "k"], ["values", "indices"], **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(X.shape)),
         helper.make_tensor_value_info("k", TensorProto.INT64, list(k_shape))],
        [helper.make_tensor_value_info("values", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("indices", TensorProto.INT64, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])


@pytest.mark.parametrize("largest", [1, 0])
def test_top_k_fed_at_run_time_matches_onnxruntime(largest):
    model = _model(axis=1, largest=largest)
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    ex = relax.build(from_onnx(model), target="c")
    machines = [relax.VirtualMachine(ex, rvm.cpu(), engine=e) for e in ENGINES]
    for k in (3, 7, 0, 1):
        feed = np.array([k], "int64")
        want = session.run(None, {"x": X, "k": feed})
        for vm in machines:
            values, indices = vm["main"](X, feed)
            np.testing.assert_array_equal(values.numpy(), want[0], err_msg=str(k))
            np.testing.assert_array_equal(indices.numpy(), want[1], err_msg=str(k))


def test_a_k_outside_the_axis_is_refused():
    ex = relax.build(from_onnx(_model(axis=1)), target="c")
    for engine in ENGINES:
        vm = relax.VirtualMachine(ex, rvm.cpu(), engine=engine)
        for k in (8, -1):
            with pytest.raises(ValueError, match="top_k_k_within_axis"):
                vm["main"](X, np.array([k], "int64"))
    with pytest.raises(Exception, match=r"TopK's k must hold one value, got shape \[2\]"):
        from_onnx(_model(k_shape=(2,)))
