"""ONNX bit operators (composed of integer arithmetic) match numpy's bit operations at
the extremes of signed and unsigned types: the sign bit, shifts out of range and
negative shifts (0, or the sign for a right shift), wrapping left shifts."""
import numpy as np
import pytest

import rvm
from rvm import relax

onnx = pytest.importorskip("onnx")
from onnx import helper  # noqa: E402

from rvm.relax.frontend.onnx import OnnxImportError, from_onnx  # noqa: E402

pytestmark = pytest.mark.frontend

_OPS = ["BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot", "LEFT", "RIGHT"]


def _model(dtype):
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    nodes = []
    for op in _OPS:
        if op in ("LEFT", "RIGHT"):
            nodes.append(helper.make_node("BitShift", ["x", "n"], [op], direction=op))
        else:
            nodes.append(helper.make_node(op, ["x"] if op == "BitwiseNot" else ["x", "y"],
                                          [op]))
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, elem, [6]) for n in "xyn"],
        [helper.make_tensor_value_info(op, elem, [6]) for op in _OPS])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _expected(x, y, n):
    bits = x.dtype.itemsize * 8
    valid = (n >= 0) & (n < bits)
    safe = np.where(valid, n, 0).astype(x.dtype)
    unsigned = np.dtype(f"u{x.dtype.itemsize}")
    zero, sign = np.zeros_like(x), np.where(x < 0, -1, 0).astype(x.dtype)
    left = np.where(valid, np.left_shift(x.view(unsigned), safe.astype(unsigned)).view(x.dtype),
                    zero)
    right = np.where(valid, np.right_shift(x, safe), sign)
    return [x & y, x | y, x ^ y, ~x, left, right]


@pytest.mark.parametrize("dtype", ["int8", "uint16"])
def test_bit_operators_match_numpy_at_the_extremes(dtype):
    info = np.iinfo(dtype)
    x = np.array([info.min, info.max, -3 if info.min else 3, 0, 1, 100], dtype)
    y = np.array([info.max, info.min, 5, info.max, 7, 1 if info.min == 0 else -1], dtype)
    n = np.array([1, 0, 2, info.bits, info.bits - 1, 3 if info.min == 0 else -1], dtype)
    vm = relax.VirtualMachine(relax.build(from_onnx(_model(dtype))), rvm.cpu())
    got = vm["main"](x, y, n)
    for op, g, want in zip(_OPS, got, _expected(x, y, n)):
        np.testing.assert_array_equal(g.numpy(), want, err_msg=op)


def test_bit_operators_refuse_floats_by_name():
    graph = helper.make_graph(
        [helper.make_node("BitwiseNot", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    with pytest.raises(OnnxImportError, match="BitwiseNot expects integer tensors, got float32"):
        from_onnx(model)
