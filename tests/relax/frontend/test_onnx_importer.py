"""from_onnx: models exported by torch.onnx.export match onnxruntime with a symbolic batch;
shape computations fold at import and symbolic dimensions stay symbolic; parameters as
inputs; the errors a user meets."""
import io
import sys

import numpy as np
import pytest

import rvm
from rvm import relax

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from rvm.relax.frontend.onnx import OnnxImportError, from_onnx, supported_ops  # noqa: E402
from rvm.relax.frontend.onnx.common import ConstantRequired  # noqa: E402

pytestmark = pytest.mark.frontend


def _model(nodes, inputs, outputs, initializers=(), opset=18):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _run(mod, *args):
    vm = relax.VirtualMachine(relax.build(mod), rvm.cpu())
    return vm["main"](*args)


# -- models exported from PyTorch -------------------------------------------------------------
@pytest.mark.parametrize("name", ["cnn", "encoder", "mlp"])
def test_exported_models_match_onnxruntime_for_every_batch(name):
    ort = pytest.importorskip("onnxruntime")
    from tests.relax.frontend.torch_models import MODELS, assert_close, seeded, torch

    model_class, shape = MODELS[name]
    buffer = io.BytesIO()
    torch.onnx.export(seeded(model_class), (torch.randn(2, *shape),), buffer, dynamo=False,
                      input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    mod = from_onnx(onnx.load_from_string(buffer.getvalue()))
    batch = mod["main"].params[0].struct_info.shape_values[0]
    assert isinstance(batch, rvm.tir.Var) and batch.name == "batch"
    vm = relax.VirtualMachine(relax.build(mod), rvm.cpu())
    session = ort.InferenceSession(buffer.getvalue(), providers=["CPUExecutionProvider"])
    for size in (1, 7, 64):
        x = np.random.default_rng(size).standard_normal((size,) + shape).astype("float32")
        assert_close(vm["main"](x).numpy(), session.run(None, {"x": x})[0])


# -- shapes -----------------------------------------------------------------------------------
def _flatten_by_shape_model():
    """y = reshape(x, [shape(x)[0], -1]): the shape arithmetic of exported models."""
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Constant", [], ["zero"], value=numpy_helper.from_array(
                 np.array(0, "int64"))),
             helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
             helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
             helper.make_node("Concat", ["n1", "minus_one"], ["target"], axis=0),
             helper.make_node("Reshape", ["x", "target"], ["y"])]
    inits = [numpy_helper.from_array(np.array([0], "int64"), "axes"),
             numpy_helper.from_array(np.array([-1], "int64"), "minus_one")]
    return _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                        ["N", 3, 4])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)


def test_shape_arithmetic_folds_and_the_batch_stays_symbolic():
    mod = from_onnx(_flatten_by_shape_model())
    text = mod.script()
    assert "R.reshape" in text and "R.shape_of" not in text and "take" not in text
    out = mod["main"].body.body.struct_info
    assert str(out.shape_values[0]) == "N" and out.shape_values[1].value == 12
    x = np.arange(5 * 12, dtype="float32").reshape(5, 3, 4)
    np.testing.assert_array_equal(_run(mod, x).numpy(), x.reshape(5, 12))


def test_shape_dict_and_dtype_dict_override_the_graph():
    mod = from_onnx(_flatten_by_shape_model(), shape_dict={"x": [2, 3, 4]},
                    dtype_dict={"x": "float64"})
    assert mod["main"].params[0].struct_info.dtype == "float64"
    out = _run(mod, np.ones((2, 3, 4), "float64")).numpy()
    assert out.shape == (2, 12) and out.dtype == np.float64


def test_a_runtime_shape_operand_is_refused_naming_the_input():
    # a scalar split decides how many tensors the sequence holds
    model = _model([helper.make_node("SplitToSequence", ["x", "sizes"], ["y"])],
                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 3]),
                    helper.make_tensor_value_info("sizes", TensorProto.INT64, [])],
                   [helper.make_tensor_sequence_value_info("y", TensorProto.FLOAT, None)])
    with pytest.raises(ConstantRequired,
                       match="SplitToSequence.*graph input 'sizes'") as info:
        from_onnx(model)
    assert info.value.input_name == "sizes"


# -- parameters -------------------------------------------------------------------------------
def _gemm_model():
    w = np.arange(12, dtype="float32").reshape(4, 3) / 10
    b = np.array([1, 2, 3], "float32")
    return _model([helper.make_node("Gemm", ["x", "w", "b"], ["y"], alpha=2.0)],
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                  [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")]), w, b


def test_initializers_are_constants_or_trailing_parameters():
    model, w, b = _gemm_model()
    x = np.ones((2, 4), "float32")
    np.testing.assert_allclose(_run(from_onnx(model), x).numpy(), 2 * x @ w + b, rtol=1e-6)
    mod = from_onnx(model, keep_params_in_input=True)
    assert [p.name_hint for p in mod["main"].params] == ["x", "w", "b"]
    mod, params = relax.frontend.detach_params(mod)
    assert mod["main"].attrs["num_input"] == 1
    np.testing.assert_array_equal(params["main"][0].numpy(), w)
    out = _run(mod, x, *params["main"]).numpy()
    np.testing.assert_allclose(out, 2 * x @ w + b, rtol=1e-6)


# -- errors -----------------------------------------------------------------------------------
def test_an_unsupported_operator_names_the_node_op_type_opset_and_the_supported_set():
    model = _model([helper.make_node("STFT", ["x", "step"], ["y"], name="stft0")],
                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 1]),
                    helper.make_tensor_value_info("step", TensorProto.INT64, [])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], opset=17)
    with pytest.raises(OnnxImportError) as info:
        from_onnx(model)
    text = str(info.value)
    assert "node 'stft0' (STFT, opset 17) is not supported" in text
    assert "Conv, " in text and "ConvTranspose" in text and "Resize" in text


def test_bad_arguments_and_attributes_are_named():
    with pytest.raises(TypeError, match="expects an onnx.ModelProto, got str"):
        from_onnx("model.onnx")
    model = _model([helper.make_node("Gelu", ["x"], ["y"], approximate="cubic")],
                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], opset=20)
    with pytest.raises(OnnxImportError, match=r"\(Gelu, opset 20\).*'none' or 'tanh'"):
        from_onnx(model)
    complex_ = _model([helper.make_node("Identity", ["x"], ["y"])],
                      [helper.make_tensor_value_info("x", TensorProto.COMPLEX64, [2])],
                      [helper.make_tensor_value_info("y", TensorProto.COMPLEX64, None)])
    with pytest.raises(OnnxImportError, match="graph input 'x': element type COMPLEX64"):
        from_onnx(complex_)


def test_tvm_path_and_a_clear_message_without_onnx(monkeypatch):
    from rvm.relax.frontend.onnx import from_onnx as tvm_path

    assert tvm_path is from_onnx
    assert {"Conv", "MatMul", "Resize", "Einsum"} <= set(supported_ops())
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(ImportError, match="pip install onnx"):
        from_onnx(object())


def test_conv_transpose_3d_with_strides_padding_dilation_and_groups_matches_onnxruntime():
    ort = pytest.importorskip("onnxruntime")
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3, 2, 3, 2)).astype("float32")  # 2 groups of 2 -> 3
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 1, 3],
                            pads=[1, 0, 1, 0, 1, 2], dilations=[2, 1, 1],
                            output_padding=[1, 0, 2], group=2)
    model = _model([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                          [2, 4, 3, 4, 5])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                   [numpy_helper.from_array(w, "w")])
    x = rng.standard_normal((2, 4, 3, 4, 5)).astype("float32")
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = _run(from_onnx(model), x).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
