"""from_onnx's pooling of windows Relax's 2-D operators do not cover (3-D, dilated, padded
past half a window): values against onnx's reference evaluator on both VM engines, one
reduction per spatial axis (not one kernel inlining every axis's taps, whose build time
grew with the product of the kernel sizes), and a malformed window refused at import."""
import numpy as np
import pytest

import rvm
from rvm import relax

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from rvm.relax.frontend.onnx import from_onnx  # noqa: E402

pytestmark = pytest.mark.frontend


def _model(op, shape, **attrs):
    node = helper.make_node(op, ["x"], ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


def _ops(mod):
    return [b.value.op.name for b in mod["main"].body.blocks[0].bindings
            if hasattr(b.value, "op") and hasattr(b.value.op, "name")]


@pytest.mark.parametrize("op, attrs", [
    ("AveragePool", {"count_include_pad": 0, "ceil_mode": 1}),
    ("AveragePool", {"count_include_pad": 1}),
    ("MaxPool", {}),
])
def test_a_dilated_3d_window_matches_the_reference_one_reduction_per_axis(op, attrs):
    model = _model(op, [1, 2, 9, 8, 7], kernel_shape=[3, 3, 3], dilations=[2, 2, 2],
                   strides=[2, 2, 2], pads=[1, 1, 1, 1, 1, 1], **attrs)
    x = np.random.default_rng(0).standard_normal((1, 2, 9, 8, 7)).astype("float32")
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    mod = from_onnx(model)
    reducer = "relax.max" if op == "MaxPool" else "relax.sum"
    assert _ops(mod).count(reducer) == 3
    ex = relax.build(mod, target="c")
    for engine in ("python", "native"):
        got = relax.VirtualMachine(ex, rvm.cpu(), engine=engine)["main"](x).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_a_window_of_the_wrong_rank_is_refused():
    model = _model("MaxPool", [1, 2, 9, 8, 7], kernel_shape=[3, 3])
    with pytest.raises(Exception, match=r"kernel_shape must hold one size >= 1 per spatial axis of the input \(3\), got \[3, 3\]"):
        from_onnx(model)
