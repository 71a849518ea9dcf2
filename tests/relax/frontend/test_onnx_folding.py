"""The ONNX importer folds with numpy only small integer shape values; other constant
computations become Relax operators, which FoldConstant evaluates by their legalization."""
import numpy as np
import pytest

import rvm
from rvm import relax

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from rvm.relax.frontend.onnx import from_onnx  # noqa: E402
from rvm.relax.frontend.onnx.registry import FOLD_MAX_ELEMENTS  # noqa: E402

pytestmark = pytest.mark.frontend


def _add_of_constants(a, b):
    nodes = [helper.make_node("Constant", [], ["a"], value=numpy_helper.from_array(a, "a")),
             helper.make_node("Constant", [], ["b"], value=numpy_helper.from_array(b, "b")),
             helper.make_node("Add", ["a", "b"], ["y"])]
    dtype = helper.np_dtype_to_tensor_dtype(a.dtype)
    graph = helper.make_graph(nodes, "g", [], [helper.make_tensor_value_info("y", dtype,
                                                                             a.shape)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _run(mod):
    return relax.VirtualMachine(relax.build(mod, target="python"), rvm.cpu())["main"]().numpy()


@pytest.mark.parametrize("a, folded", [
    (np.arange(4, dtype="int64"), True),  # a shape value: numpy at import
    (np.arange(4, dtype="float32"), False),  # data: the operator's own definition
    (np.arange(FOLD_MAX_ELEMENTS + 1, dtype="int64"), False),  # too long for a shape
])
def test_only_small_integer_values_fold_at_import(a, folded):
    mod = from_onnx(_add_of_constants(a, a))
    assert ("R.add" not in mod["main"].script()) == folded
    np.testing.assert_array_equal(_run(mod), a + a)
    after = relax.transform.FoldConstant()(relax.transform.LegalizeOps()(mod))
    assert "call_tir" not in after["main"].script()
