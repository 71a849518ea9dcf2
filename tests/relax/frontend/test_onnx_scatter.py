"""ONNX ScatterElements, ScatterND, TensorScatter and GatherND (relax.scatter_elements,
relax.scatter_nd, relax.gather_nd): reductions and negative indices match onnx's reference
evaluator on the C and python targets; an index beyond its axis is refused (nothing is
written); wrong operands are refused with the operator's name."""
import numpy as np
import pytest

import rvm
from rvm import relax

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from rvm.relax.frontend.onnx import from_onnx  # noqa: E402

pytestmark = pytest.mark.frontend


def _model(op, shapes, dtypes, **attrs):
    names = list(shapes)
    node = helper.make_node(op, names, ["y"], **attrs)
    graph = helper.make_graph([node], "g", [
        helper.make_tensor_value_info(n, dtypes[n], shapes[n]) for n in names],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


_F, _I = TensorProto.FLOAT, TensorProto.INT64
_DATA = np.arange(12, dtype="float32").reshape(3, 4)


@pytest.mark.parametrize("target", ["c", "python"])
@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
def test_scatter_elements_matches_the_reference(reduction, target):
    model = _model("ScatterElements", {"d": [3, 4], "i": [2, 2], "u": [2, 2]},
                   {"d": _F, "i": _I, "u": _F}, axis=1, reduction=reduction)
    feeds = {"d": _DATA, "i": np.array([[0, -1], [2, 2]], "int64"),
             "u": np.array([[10, 20], [30, 40]], "float32")}
    vm = relax.VirtualMachine(relax.build(from_onnx(model), target=target), rvm.cpu())
    want, = ReferenceEvaluator(model).run(None, feeds)
    np.testing.assert_array_equal(vm["main"](*feeds.values()).numpy(), want)


@pytest.mark.parametrize("reduction", ["none", "add"])
def test_scatter_nd_and_gather_nd_match_the_reference(reduction):
    scatter = _model("ScatterND", {"d": [3, 4], "i": [2, 1], "u": [2, 4]},
                     {"d": _F, "i": _I, "u": _F}, reduction=reduction)
    feeds = {"d": _DATA, "i": np.array([[2], [0]], "int64"),
             "u": np.ones((2, 4), "float32")}
    vm = relax.VirtualMachine(relax.build(from_onnx(scatter)), rvm.cpu())
    want, = ReferenceEvaluator(scatter).run(None, feeds)
    np.testing.assert_array_equal(vm["main"](*feeds.values()).numpy(), want)
    gather = _model("GatherND", {"d": [3, 4], "i": [3, 1]}, {"d": _F, "i": _I}, batch_dims=1)
    feeds = {"d": _DATA, "i": np.array([[3], [0], [-1]], "int64")}
    vm = relax.VirtualMachine(relax.build(from_onnx(gather)), rvm.cpu())
    np.testing.assert_array_equal(vm["main"](*feeds.values()).numpy(), [3, 4, 11])


@pytest.mark.parametrize("target", ["c", "python"])
def test_indices_beyond_the_axis_are_refused(target):
    model = _model("ScatterElements", {"d": [3, 4], "i": [1, 2], "u": [1, 2]},
                   {"d": _F, "i": _I, "u": _F}, axis=1)
    vm = relax.VirtualMachine(relax.build(from_onnx(model), target=target), rvm.cpu())
    with pytest.raises(IndexError, match=r"scatter_elements: index 1000 out of range "
                                         r"\[-4, 4\) along axis 1"):
        vm["main"](_DATA, np.array([[1000, -1]], "int64"), np.array([[-1, -2]], "float32"))


def test_scatter_operands_are_checked_by_name():
    from rvm.relax.expr import Var
    from rvm.relax.op import scatter_elements, scatter_nd
    from rvm.relax.struct_info import TensorStructInfo as T

    bb = relax.BlockBuilder()
    d, i = Var("d", T((3, 4), "float32")), Var("i", T((2, 4), "int64"))
    with pytest.raises(ValueError, match="relax.scatter_elements: 'updates' must have the "
                                         "dtype of 'data' \\(float32\\), got int64"):
        bb.normalize(scatter_elements(d, i, i))
    with pytest.raises(ValueError, match="relax.scatter_nd: indices of depth 4 into data of "
                                         "rank 2 need updates of rank"):
        bb.normalize(scatter_nd(d, i, Var("u", T((2,), "float32"))))
