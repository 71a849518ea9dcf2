"""from_onnx's MaxUnpool of MaxPool's values and indices, with and without an
output_shape (an initializer or fed at run time), against onnx's reference evaluator on
both VM engines; an output_shape smaller than the unpooled shape is refused at run time,
an index outside it is refused at run time."""
import numpy as np
import pytest

import rvm
from rvm import relax

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from rvm.relax.frontend.onnx import from_onnx  # noqa: E402

pytestmark = pytest.mark.frontend

ENGINES = ("python", "native")
ATTRS = {"kernel_shape": [2, 2], "strides": [2, 2]}
X = np.random.default_rng(0).standard_normal((2, 3, 4, 4)).astype("float32")


def _pooled():
    """MaxPool's values and indices of X (onnx's reference), [2, 3, 2, 2] each."""
    node = helper.make_node("MaxPool", ["x"], ["v", "i"], **ATTRS)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(X.shape))],
        [helper.make_tensor_value_info("v", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("i", TensorProto.INT64, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    return ReferenceEvaluator(model).run(None, {"x": X})


def _model(output_shape):
    names = ["v", "i"] + (["s"] if output_shape is not None else [])
    node = helper.make_node("MaxUnpool", names, ["y"], **ATTRS)
    inputs = [helper.make_tensor_value_info("v", TensorProto.FLOAT, [2, 3, 2, 2]),
              helper.make_tensor_value_info("i", TensorProto.INT64, [2, 3, 2, 2])]
    inits = []
    if output_shape == "fed":
        inputs.append(helper.make_tensor_value_info("s", TensorProto.INT64, [4]))
    elif output_shape is not None:
        inits.append(helper.make_tensor("s", TensorProto.INT64, [4], output_shape))
    graph = helper.make_graph([node], "g", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])


def _machines(model):
    ex = relax.build(from_onnx(model), target="c")
    return [relax.VirtualMachine(ex, rvm.cpu(), engine=e) for e in ENGINES]


@pytest.mark.parametrize("output_shape", [None, [2, 3, 5, 4]])
def test_max_unpool_matches_the_reference(output_shape):
    values, where = _pooled()
    model = _model(output_shape)
    want = ReferenceEvaluator(model).run(None, {"v": values, "i": where})[0]
    assert want.shape == ((2, 3, 4, 4) if output_shape is None else (2, 3, 5, 4))
    for vm in _machines(model):
        np.testing.assert_array_equal(vm["main"](values, where).numpy(), want)


def test_an_output_shape_fed_at_run_time():
    values, where = _pooled()
    model = _model("fed")
    reference = ReferenceEvaluator(model)
    for vm in _machines(model):
        for shape in ([2, 3, 4, 4], [2, 3, 6, 5]):
            s = np.array(shape, "int64")
            want = reference.run(None, {"v": values, "i": where, "s": s})[0]
            np.testing.assert_array_equal(vm["main"](values, where, s).numpy(), want)
        with pytest.raises(ValueError,
                           match="max_unpool_output_shape_covers_the_unpooled_shape"):
            vm["main"](values, where, np.array([2, 3, 3, 3], "int64"))
        bad = where.copy()
        bad[0, 0, 0, 0] = 2 * 3 * 4 * 4  # one past the unpooled tensor
        with pytest.raises(ValueError, match="max_unpool_indices_within_the_unpooled_shape"):
            vm["main"](values, bad, np.array([2, 3, 4, 4], "int64"))
