"""from_onnx's Resize with its scales, sizes or roi fed at run time: one compiled model
serves every value, on the C target and both VM engines, matching onnx's reference
evaluator; scales and sizes that would give no valid output length are refused at run
time with a named error."""
import numpy as np
import pytest

import rvm
from rvm import relax

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from rvm.relax.frontend.onnx import from_onnx  # noqa: E402

pytestmark = pytest.mark.frontend

ENGINES = ("python", "native")
X = np.random.default_rng(0).standard_normal((1, 2, 4, 5)).astype("float32")


def _model(inputs, slots, **attrs):
    """A Resize node reading the graph inputs ``inputs`` (name -> example) in the input
    slots ``slots`` (X, roi, scales, sizes; "" for an omitted one)."""
    node = helper.make_node("Resize", slots, ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype),
                                       list(v.shape)) for n, v in inputs.items()],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


def _machines(model):
    ex = relax.build(from_onnx(model), target="c")
    return [relax.VirtualMachine(ex, rvm.cpu(), engine=e) for e in ENGINES]


def _scales(*values):
    return np.array(values, "float32")


def _sizes(*values):
    return np.array(values, "int64")


CASES = {
    "nearest_scales": ({"x": X, "s": _scales(2, 1.5)}, ["x", "", "s"], {"axes": [2, 3]},
                       [{"s": _scales(0.5, 0.6)}, {"s": _scales(1.3, 3)}]),
    "nearest_sizes_axes_ceil": ({"x": X, "z": _sizes(7, 3)}, ["x", "", "", "z"],
                                {"axes": [3, 2], "nearest_mode": "ceil",
                                 "coordinate_transformation_mode": "asymmetric"},
                                [{"z": _sizes(2, 9)}]),
    "cubic_antialias": ({"x": X, "s": _scales(0.6, 0.4)}, ["x", "", "s"],
                        {"axes": [2, 3], "mode": "cubic", "antialias": 1},
                        [{"s": _scales(0.25, 0.2)}, {"s": _scales(1.5, 2)}]),
    "not_smaller": ({"x": X, "z": _sizes(6, 6)}, ["x", "", "", "z"],
                    {"axes": [2, 3], "keep_aspect_ratio_policy": "not_smaller",
                     "mode": "linear", "coordinate_transformation_mode":
                     "half_pixel_symmetric"}, [{"z": _sizes(3, 9)}]),
    "tf_crop_and_resize": ({"x": X, "r": np.array([0.2, 0.1, 0.9, 1.2], "float32"),
                            "z": _sizes(3, 4)}, ["x", "r", "", "z"],
                           {"axes": [2, 3], "mode": "linear", "extrapolation_value": 7.0,
                            "coordinate_transformation_mode": "tf_crop_and_resize"},
                           [{"r": np.array([-0.5, 0.3, 0.5, 0.6], "float32"),
                             "z": _sizes(1, 6)}]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_resize_fed_at_run_time_matches_the_reference(name):
    inputs, slots, attrs, variants = CASES[name]
    model = _model(inputs, slots, **attrs)
    assert [p.name_hint for p in from_onnx(model)["main"].params] == list(inputs)
    reference = ReferenceEvaluator(model)
    machines = _machines(model)
    for changes in [{}] + variants:
        feeds = {**inputs, **changes}
        want = reference.run(None, feeds)[0]
        for vm in machines:
            got = vm["main"](*feeds.values()).numpy()
            assert got.shape == want.shape, (name, changes)
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5,
                                       err_msg=f"{name} {changes}")


def test_bad_run_time_scales_and_sizes_are_named_errors():
    scaled = _model({"x": X, "s": _scales(2, 2)}, ["x", "", "s"], axes=[2, 3])
    sized = _model({"x": X, "z": _sizes(3, 3)}, ["x", "", "", "z"], axes=[2, 3])
    for vm in _machines(scaled):
        for bad in (_scales(-2, 2), _scales(0, 2), _scales(np.nan, 1), _scales(1, np.inf)):
            with pytest.raises(ValueError, match="resize_scales_positive_and_finite"):
                vm["main"](X, bad)
    for vm in _machines(sized):
        with pytest.raises(ValueError, match="resize_sizes_non_negative"):
            vm["main"](X, _sizes(3, -1))
        assert vm["main"](X, _sizes(0, 2)).numpy().shape == (1, 2, 0, 2)


def test_run_time_scales_of_the_wrong_length_are_refused_at_import():
    model = _model({"x": X, "s": _scales(2, 2)}, ["x", "", "s"])
    with pytest.raises(ValueError, match="scales must hold 4 factors"):
        from_onnx(model)


@pytest.mark.parametrize("op, opset", [("Upsample", 9), ("Resize", 10)])
def test_upsample_by_run_time_scales_repeats_elements(op, opset):
    """Upsample, and Resize before opset 11 (inputs X and scales), sample as Upsample."""
    node = helper.make_node(op, ["x", "s"], ["y"], mode="nearest")
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(X.shape)),
                      helper.make_tensor_value_info("s", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    for vm in _machines(model):
        for scales in ((1, 1, 2, 3), (1, 2, 3, 1)):
            want = X
            for axis, s in enumerate(scales):
                want = np.repeat(want, s, axis=axis)
            np.testing.assert_array_equal(vm["main"](X, _scales(*scales)).numpy(), want)
