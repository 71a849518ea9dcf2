"""Operators converted by expanding their ONNX function body (ops_function): the body
onnx's schema gives is converted in the node's place, attribute references take the
node's attributes or the defaults, and results match onnx's reference evaluator."""
import numpy as np
import pytest

import rvm
from rvm import relax

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from rvm.relax.frontend.onnx import OnnxImportError, from_onnx  # noqa: E402

pytestmark = pytest.mark.frontend


def _model(node, inputs, outputs, opset):
    graph = helper.make_graph([node], "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _check(model, feeds, rtol=1e-5):
    vm = relax.VirtualMachine(relax.build(from_onnx(model)), rvm.cpu())
    got = vm["main"](*feeds.values())
    want = ReferenceEvaluator(model).run(None, feeds)
    got = [got] if len(want) == 1 else list(got)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w, rtol=rtol, atol=1e-6)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_softmax_cross_entropy_loss_with_ignore_index(reduction):
    node = helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t"], ["loss", "logp"],
                            reduction=reduction, ignore_index=1)
    model = _model(node, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 5]),
                          helper.make_tensor_value_info("t", TensorProto.INT64, [3])],
                   [helper.make_tensor_value_info("loss", TensorProto.FLOAT, None),
                    helper.make_tensor_value_info("logp", TensorProto.FLOAT, [3, 5])], 18)
    x = np.random.default_rng(0).standard_normal((3, 5)).astype("float32")
    _check(model, {"x": x, "t": np.array([0, 1, 4], "int64")})


@pytest.mark.parametrize("attrs", [{}, {"periodic": 0}, {"output_datatype": 11}])
def test_window_attributes_default_to_the_schema(attrs):
    # the body refers to periodic and output_datatype; absent, the schema's defaults apply
    node = helper.make_node("HannWindow", ["n"], ["w"], **attrs)
    model = _model(node, [helper.make_tensor_value_info("n", TensorProto.INT64, [])],
                   [helper.make_tensor_value_info("w", attrs.get("output_datatype", 1),
                                                  None)], 17)
    n = np.array(8, "int64")
    vm = relax.VirtualMachine(relax.build(from_onnx(model)), rvm.cpu())
    got = vm["main"](n).numpy()
    want, = ReferenceEvaluator(model).run(None, {"n": n})
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_an_operator_before_its_opset_is_refused_by_name():
    node = helper.make_node("Attention", ["q", "k", "v"], ["y"])
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 2, 4, 8])
              for n in ("q", "k", "v")]
    model = _model(node, inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                                                None)], 18)
    with pytest.raises(OnnxImportError, match="Attention.*no schema for Attention at opset 18"):
        from_onnx(model)


def test_an_operator_of_another_domain_needs_a_converter_of_that_domain():
    node = helper.make_node("SwiGLU", ["x"], ["y"], domain="com.example")
    graph = helper.make_graph([node], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24),
                                                    helper.make_opsetid("com.example", 1)])
    with pytest.raises(OnnxImportError, match="operators of domain 'com.example' are not "
                                              "supported; .*ai.onnx.preview.FlexAttention"):
        from_onnx(model)
