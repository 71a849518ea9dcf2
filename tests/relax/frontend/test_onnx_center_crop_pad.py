"""from_onnx's CenterCropPad: values against onnxruntime and onnx's reference evaluator,
its target shape an initializer or fed at run time (one compiled model for every
target), on both VM engines; a bad target is refused at import or at run time."""
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
X = np.arange(2 * 7 * 6, dtype="float32").reshape(2, 7, 6)


def _model(shape, fed, **attrs):
    """A CenterCropPad of a float32 [2, 7, 6] input to ``shape``, a graph input when
    ``fed``, else an initializer."""
    node = helper.make_node("CenterCropPad", ["x", "s"], ["y"], **attrs)
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(X.shape))]
    inits = []
    if fed:
        inputs.append(helper.make_tensor_value_info("s", TensorProto.INT64, [len(shape)]))
    else:
        inits.append(helper.make_tensor("s", TensorProto.INT64, [len(shape)], shape))
    graph = helper.make_graph([node], "g", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _run(model, feeds):
    ex = relax.build(from_onnx(model), target="c")
    return [relax.VirtualMachine(ex, rvm.cpu(), engine=e)["main"](*feeds).numpy()
            for e in ENGINES]


@pytest.mark.parametrize("shape, attrs", [
    ([1, 10, 3], {}),                       # crop, pad by an odd amount, crop by an odd one
    ([4, 7], {"axes": [-2, 2]}),            # pad by an even amount, keep the other axis
    ([3], {"axes": [0]}),
])
def test_center_crop_pad_matches_onnxruntime(shape, attrs):
    model = _model(shape, fed=False, **attrs)
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    want = session.run(None, {"x": X})[0]
    for got in _run(model, [X]):
        np.testing.assert_array_equal(got, want)


def test_a_target_fed_at_run_time_serves_every_shape():
    model = _model([5, 9], fed=True, axes=[1, 2])
    assert [p.name_hint for p in from_onnx(model)["main"].params] == ["x", "s"]
    reference = ReferenceEvaluator(model)
    ex = relax.build(from_onnx(model), target="c")
    machines = [relax.VirtualMachine(ex, rvm.cpu(), engine=e) for e in ENGINES]
    for target in ([5, 9], [7, 6], [10, 1], [0, 3], [1, 12]):
        s = np.array(target, "int64")
        want = reference.run(None, {"x": X, "s": s})[0]
        for vm in machines:
            got = vm["main"](X, s).numpy()
            assert got.shape == want.shape, target
            np.testing.assert_array_equal(got, want, err_msg=str(target))


def test_a_negative_target_is_refused_at_run_time():
    ex = relax.build(from_onnx(_model([3, 3], fed=True, axes=[1, 2])), target="c")
    for engine in ENGINES:
        vm = relax.VirtualMachine(ex, rvm.cpu(), engine=engine)
        with pytest.raises(ValueError, match="center_crop_pad_shape_non_negative"):
            vm["main"](X, np.array([3, -2], "int64"))


def test_a_target_of_the_wrong_length_is_refused_at_import():
    with pytest.raises(Exception, match=r"CenterCropPad's shape must hold one length >= 0 "
                                        r"per axis \(2 axes\), got \[3, 4, 5\]"):
        from_onnx(_model([3, 4, 5], fed=False, axes=[0, 1]))
    with pytest.raises(Exception, match=r"one length per axis \(3 axes\), got shape \[2\]"):
        from_onnx(_model([3, 4], fed=True))
