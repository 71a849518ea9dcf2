"""ONNX Cast to the narrow types: ``saturate`` and FLOAT8E8M0's ``round_mode`` agree with
onnx's reference evaluator, on the graph path (C and python targets) and when the input
is a constant (folded at build, by FoldConstant)."""
import numpy as np
import pytest

import rvm
from rvm import relax

onnx = pytest.importorskip("onnx")
ml_dtypes = pytest.importorskip("ml_dtypes")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from rvm.relax.frontend.onnx import from_onnx  # noqa: E402

pytestmark = pytest.mark.frontend

VALUES = np.array([0.0, -0.0, 0.3, -1.7, 3.0, 100.0, 239.0, 241.0, 448.0, 449.0, 470.0,
                   1000.0, -1e6, 57344.0, 61440.0, 1e9, 3e38, np.inf, -np.inf, np.nan, 1e-30,
                   -2.0 ** -130, 2.0 ** -127, 1.5 * 2.0 ** -127, 2.0 ** 127 * 1.5],
                  np.float32)


def _model(to, constant, **attrs):
    node = helper.make_node("Cast", ["x"], ["y"], to=to, **attrs)
    nodes, inputs = [node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None])]
    if constant:
        nodes.insert(0, helper.make_node("Constant", [], ["x"],
                                         value=numpy_helper.from_array(VALUES, "x")))
        inputs = []
    graph = helper.make_graph(nodes, "cast", inputs,
                              [helper.make_tensor_value_info("y", to, [None])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])


def _run(model, target):
    mod = from_onnx(model)
    vm = relax.VirtualMachine(relax.build(mod, target=target), rvm.cpu())
    args = [] if not model.graph.input else [VALUES]
    return vm["main"](*args).numpy()


def _same(got, want):
    assert got.dtype == want.dtype
    g, w = got.astype(np.float32), want.astype(np.float32)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
    np.testing.assert_array_equal(g[~np.isnan(w)], w[~np.isnan(w)])


CASES = [(to, {"saturate": s}) for to in (TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E4M3FNUZ,
                                           TensorProto.FLOAT8E5M2, TensorProto.FLOAT8E5M2FNUZ)
         for s in (0, 1)]
CASES += [(TensorProto.FLOAT8E8M0, {"saturate": s, "round_mode": mode})
          for s in (0, 1) for mode in ("up", "down", "nearest")]
CASES += [(to, {}) for to in (TensorProto.BFLOAT16, TensorProto.FLOAT16,
                              TensorProto.FLOAT4E2M1, TensorProto.INT4, TensorProto.UINT2)]


@pytest.mark.parametrize("constant", [False, True], ids=["graph", "folded"])
@pytest.mark.parametrize("to,attrs", CASES, ids=lambda v: str(v))
def test_cast_matches_the_reference_evaluator(to, attrs, constant):
    model = _model(to, constant, **attrs)
    with np.errstate(all="ignore"):
        want = ReferenceEvaluator(model).run(None, {} if constant else {"x": VALUES})[0]
    targets = ["python"] if constant else ["python", "c"]
    for target in targets:
        with np.errstate(all="ignore"):
            got = _run(model, target)
        if want.dtype.kind in "iu" or want.dtype.name in ("int4", "uint2"):
            np.testing.assert_array_equal(got.astype(np.int64), want.astype(np.int64))
        else:
            _same(got, want)


def test_an_unknown_round_mode_is_a_clear_error():
    model = _model(TensorProto.FLOAT8E8M0, False, round_mode="sideways")
    with pytest.raises(ValueError, match="round_mode 'sideways' is not one of up, down"):
        from_onnx(model)
