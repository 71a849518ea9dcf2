"""from_onnx with quantized and half-precision models: MLPs quantized by onnxruntime's
tooling (dynamic and static QDQ), QLinearMatMul/QLinearConv models built by hand and a
float16 MLP match onnxruntime on the C target; the quantized products stay integer;
QuantizeLinear rounds ties to even and saturates; bad operands are named errors.

Tolerances, per type: the float outputs of an int8 model whose integer part is exact
(dynamic quantization: MatMulInteger, then float scaling) within 1e-5; an int8 output
(QLinearMatMul, QLinearConv, QDQ) within one quantum (onnxruntime requantizes in float32,
rvm in float64 as onnx's reference does, so a tie may land one step apart); float16
outputs within 2**-9 relative and absolute (two float16 steps: both round each
operator's result once, the summation order differs).
"""
import numpy as np
import pytest

import rvm
from rvm import relax

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from rvm.relax.frontend.onnx import OnnxImportError, from_onnx  # noqa: E402

pytestmark = pytest.mark.frontend


def _model(nodes, inputs, outputs, initializers=(), opset=21):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _value(name, dtype, shape):
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(
        np.dtype(dtype)), shape)


def _rvm(model, *args):
    vm = relax.VirtualMachine(relax.build(from_onnx(model), target="c"), rvm.cpu())
    out = vm["main"](*args)
    return out.numpy() if hasattr(out, "numpy") else [o.numpy() for o in out]


def _ort(model, feeds):
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    return session.run(None, feeds)[0]


def float_mlp(dims=(64, 48, 10), dtype="float32", seed=0):
    """MatMul + Add (+ Relu between layers) with a symbolic batch."""
    rng = np.random.default_rng(seed)
    nodes, inits, prev = [], [], "x"
    for k, (i, o) in enumerate(zip(dims[:-1], dims[1:])):
        inits += [numpy_helper.from_array((rng.standard_normal((i, o)) / np.sqrt(i)).astype(
            dtype), f"w{k}"), numpy_helper.from_array((rng.standard_normal(o) * 0.1).astype(
                dtype), f"b{k}")]
        nodes += [helper.make_node("MatMul", [prev, f"w{k}"], [f"m{k}"]),
                  helper.make_node("Add", [f"m{k}", f"b{k}"], [f"a{k}"])]
        prev = f"a{k}"
        if k < len(dims) - 2:
            nodes.append(helper.make_node("Relu", [prev], [f"r{k}"]))
            prev = f"r{k}"
    return _model(nodes, [_value("x", dtype, ["batch", dims[0]])],
                  [_value(prev, dtype, ["batch", dims[-1]])], inits, opset=17)


def _batch(seed, rows=8, cols=64):
    return np.random.default_rng(seed).standard_normal((rows, cols)).astype("float32")


# -- models ---------------------------------------------------------------------------------
def test_a_dynamically_quantized_mlp_matches_onnxruntime(tmp_path):
    from onnxruntime.quantization import QuantType, quantize_dynamic

    onnx.save(float_mlp(), tmp_path / "f.onnx")
    quantize_dynamic(tmp_path / "f.onnx", tmp_path / "q.onnx", weight_type=QuantType.QInt8)
    model = onnx.load(tmp_path / "q.onnx")
    assert {"DynamicQuantizeLinear", "MatMulInteger"} <= {n.op_type for n in model.graph.node}
    for seed in (1, 2):
        x = _batch(seed)
        np.testing.assert_allclose(_rvm(model, x), _ort(model, {"x": x}), rtol=1e-5,
                                   atol=1e-5)


def test_a_statically_quantized_qdq_mlp_matches_onnxruntime(tmp_path):
    from onnxruntime.quantization import (
        CalibrationDataReader, QuantFormat, QuantType, quantize_static,
    )

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.batches = iter([{"x": _batch(seed)} for seed in range(4)])

        def get_next(self):
            return next(self.batches, None)

    onnx.save(float_mlp(), tmp_path / "f.onnx")
    quantize_static(tmp_path / "f.onnx", tmp_path / "q.onnx", Reader(),
                    quant_format=QuantFormat.QDQ, activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8)
    model = onnx.load(tmp_path / "q.onnx")
    out_scale = [n for n in model.graph.node if n.op_type == "DequantizeLinear"][-1].input[1]
    quantum = float(numpy_helper.to_array(
        next(i for i in model.graph.initializer if i.name == out_scale)))
    x = _batch(9)
    np.testing.assert_allclose(_rvm(model, x), _ort(model, {"x": x}), rtol=0,
                               atol=quantum * 1.001)


def _qlinear_mlp_and_cnn():
    """x (float) -> QuantizeLinear(uint8) -> QLinearConv (per-channel int8 weights, int32
    bias) -> QLinearMatMul (int8 weights) -> DequantizeLinear."""
    rng = np.random.default_rng(3)
    f = np.float32
    inits = {
        "xs": np.array(0.02, f), "xz": np.array(128, np.uint8),
        "w": rng.integers(-127, 128, (4, 2, 3, 3)).astype(np.int8),
        "ws": (rng.random(4) * 0.01 + 0.005).astype(f), "wz": np.zeros(4, np.int8),
        "cs": np.array(0.05, f), "cz": np.array(100, np.uint8),
        "bias": rng.integers(-2000, 2000, 4).astype(np.int32),
        "shape": np.array([-1, 4 * 5 * 5], np.int64),
        "m": rng.integers(-127, 128, (100, 6)).astype(np.int8),
        "ms": np.array(0.01, f), "mz": np.array(0, np.int8),
        "ys": np.array(0.3, f), "yz": np.array(120, np.uint8),
    }
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("QLinearConv", ["xq", "xs", "xz", "w", "ws", "wz", "cs", "cz", "bias"],
                         ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Reshape", ["c", "shape"], ["flat"]),
        helper.make_node("QLinearMatMul", ["flat", "cs", "cz", "m", "ms", "mz", "ys", "yz"],
                         ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"]),
    ]
    return _model(nodes, [_value("x", "float32", ["batch", 2, 5, 5])],
                  [_value("y", "float32", ["batch", 6])],
                  [numpy_helper.from_array(v, k) for k, v in inits.items()], opset=13)


def test_qlinear_conv_and_matmul_built_by_hand_match_onnxruntime():
    model = _qlinear_mlp_and_cnn()
    x = np.random.default_rng(4).standard_normal((3, 2, 5, 5)).astype("float32")
    want = _ort(model, {"x": x})
    got = _rvm(model, x)
    np.testing.assert_allclose(got, want, rtol=0, atol=0.3 * 1.001)
    assert np.mean(got == want) > 0.9  # one quantum apart only on ties


def test_a_float16_mlp_matches_onnxruntime():
    model = float_mlp(dims=(64, 128, 10), dtype="float16")
    x = _batch(5).astype("float16")
    got, want = _rvm(model, x), _ort(model, {"x": x})
    assert got.dtype == want.dtype == np.float16
    np.testing.assert_allclose(got.astype("float32"), want.astype("float32"),
                               rtol=2.0 ** -9, atol=2.0 ** -9)


# -- semantics --------------------------------------------------------------------------------
def _relax_calls(mod, op_name):
    """The dtypes of the arguments and result of every call to ``op_name``."""
    from rvm.relax.expr_functor import ExprVisitor
    from rvm.relax.function import Function

    found = []

    class Calls(ExprVisitor):
        def visit_call_(self, call):
            if getattr(call.op, "name", None) == op_name:
                found.append(([str(a.struct_info.dtype) for a in call.args],
                              str(call.struct_info.dtype)))
            super().visit_call_(call)

    for func in mod.functions.values():
        if isinstance(func, Function):
            Calls().visit_expr(func)
    return found


def test_quantized_products_are_int32_matmuls_and_convolutions():
    mod = from_onnx(_qlinear_mlp_and_cnn())
    assert _relax_calls(mod, "relax.matmul") == [(["int32", "int32"], "int32")]
    assert _relax_calls(mod, "relax.nn.conv2d") == [(["int32", "int32"], "int32")]


def test_quantize_linear_rounds_ties_to_even_and_saturates():
    model = _model([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])],
                   [_value("x", "float32", [9]), _value("s", "float32", []),
                    _value("z", "int8", [])], [_value("y", "int8", [9])])
    halves = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 1000, -1000, 3.49], "float32")
    got = _rvm(model, halves * 0.5, np.array(0.5, "float32"), np.array(1, "int8"))
    np.testing.assert_array_equal(got, [1, 3, 3, 1, -1, -1, 127, -128, 4])


def test_per_row_and_per_column_zero_points_of_matmul_integer():
    model = _model([helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])],
                   [_value("a", "uint8", [3, 4]), _value("b", "int8", [4, 2]),
                    _value("az", "uint8", [3]), _value("bz", "int8", [2])],
                   [_value("y", "int32", [3, 2])])
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 256, (3, 4)).astype("uint8"), rng.integers(-128, 128, (4, 2)).astype(
        "int8")
    az, bz = np.array([0, 100, 255], "uint8"), np.array([-128, 7], "int8")
    want = (a.astype(np.int64) - az[:, None]) @ (b.astype(np.int64) - bz[None, :])
    np.testing.assert_array_equal(_rvm(model, a, b, az, bz), want)


def test_per_axis_dequantize_of_a_run_time_scale():
    model = _model([helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], axis=0)],
                   [_value("x", "int8", [2, 3]), _value("s", "float16", [2]),
                    _value("z", "int8", [2])], [_value("y", "float16", [2, 3])])
    x = np.array([[1, 2, 3], [-4, 5, 127]], "int8")
    s, z = np.array([0.5, 0.25], "float16"), np.array([1, -1], "int8")
    got = _rvm(model, x, s, z)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, [[0, 0.5, 1], [-0.75, 1.5, 32]])


@pytest.mark.parametrize("node, inputs, message", [
    (("DequantizeLinear", ["x", "s", "z"]), [("x", "uint8", [4]), ("s", "float32", []),
                                            ("z", "int8", [])],
     "x_zero_point has type int8, expected the type of x, uint8"),
    (("QuantizeLinear", ["x", "s"]), [("x", "float32", [2, 3]), ("s", "float32", [2])],
     "y_scale has 2 elements, expected 3"),
    (("QuantizeLinear", ["x", "s", "z"]), [("x", "float32", [4]), ("s", "float32", []),
                                          ("z", "int32", [])], "cannot quantize to int32"),
    (("MatMulInteger", ["a", "b"]), [("a", "float32", [2, 2]), ("b", "int8", [2, 2])],
     "A must be uint8 or int8, got float32"),
    (("QuantizeLinear", ["x", "s"]), [("x", "float32", [4, 4]), ("s", "float32", [2])],
     "blocked y_scale must have the rank of the input"),
    (("ConvInteger", ["x", "w", "xz"]), [("x", "uint8", [1, 2, 3, 3]),
                                         ("w", "uint8", [1, 2, 2, 2]), ("xz", "uint8", [2])],
     r"x_zero_point must be a scalar \(per tensor\), got shape \[2\]"),
    (("QLinearMatMul", ["a", "s", "z", "b", "s", "z", "s", "yz"]),
     [("a", "uint8", [2, 2]), ("s", "float32", []), ("z", "uint8", []), ("b", "uint8", [2, 2]),
      ("yz", "int32", [])], "the output type must be uint8 or int8, got int32"),
])
def test_bad_quantization_operands_are_named(node, inputs, message):
    op_type, names = node
    attrs = {"block_size": 2} if message.startswith("blocked") else {}
    model = _model([helper.make_node(op_type, names, ["y"], **attrs)],
                   [_value(n, d, s) for n, d, s in inputs], [_value("y", "float32", None)])
    with pytest.raises(OnnxImportError, match=f"{op_type}.*{message}"):
        from_onnx(model)


def test_an_output_dtype_that_contradicts_the_zero_point_is_refused():
    model = _model([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"],
                                     output_dtype=TensorProto.INT8)],
                   [_value("x", "float32", [4]), _value("s", "float32", []),
                    _value("z", "uint8", [])], [_value("y", "int8", [4])])
    with pytest.raises(OnnxImportError, match="output_dtype int8 differs from the zero "
                                              "point's type uint8"):
        from_onnx(model)
