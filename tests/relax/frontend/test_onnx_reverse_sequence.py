"""from_onnx's ReverseSequence: values against onnx's reference evaluator on both VM
engines (batch-major and time-major, lengths fed at run time, 0 and the full length),
lengths outside [0, time steps] refused at run time, bad axes refused at import."""
import numpy as np
import pytest

import rvm
from rvm import relax

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from rvm.relax.frontend.onnx import from_onnx  # noqa: E402

pytestmark = pytest.mark.frontend


def _model(shape, batch, **attrs):
    node = helper.make_node("ReverseSequence", ["x", "lens"], ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape),
                      helper.make_tensor_value_info("lens", TensorProto.INT64, [batch])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _machines(model):
    ex = relax.build(from_onnx(model), target="c")
    return [relax.VirtualMachine(ex, rvm.cpu(), engine=e) for e in ("python", "native")]


@pytest.mark.parametrize("time_axis, batch_axis", [(0, 1), (1, 0)])
def test_reverse_sequence_matches_the_reference(time_axis, batch_axis):
    shape = [5, 3, 2] if time_axis == 0 else [3, 5, 2]
    model = _model(shape, 3, time_axis=time_axis, batch_axis=batch_axis)
    x = np.arange(30, dtype="float32").reshape(shape)
    reference = ReferenceEvaluator(model)
    machines = _machines(model)
    for lens in ([5, 2, 0], [1, 3, 4]):
        lens = np.array(lens, "int64")
        want = reference.run(None, {"x": x, "lens": lens})[0]
        for vm in machines:
            np.testing.assert_array_equal(vm["main"](x, lens).numpy(), want)


@pytest.mark.parametrize("lens", [[6, 1, 1], [1, -1, 1]])
def test_lengths_outside_the_time_steps_are_refused_at_run_time(lens):
    model = _model([5, 3, 2], 3)
    x = np.zeros((5, 3, 2), "float32")
    for vm in _machines(model):
        with pytest.raises(Exception, match="reverse_sequence_lens_in_range"):
            vm["main"](x, np.array(lens, "int64"))


def test_axes_other_than_0_and_1_are_refused():
    with pytest.raises(Exception, match="time_axis and batch_axis must be 0 and 1"):
        from_onnx(_model([5, 3, 2], 3, time_axis=0, batch_axis=0))
