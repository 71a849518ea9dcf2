"""from_onnx's Resize with its scales, sizes or roi fed at run time: one compiled model
serves every value, on the C target and both VM engines, matching onnx's reference
evaluator; scales and sizes that would give no valid output length are refused at run
time with a named error."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from rvm.relax.frontend.onnx import from_onnx  # noqa: E402
from tests.relax.frontend.onnx_runtime_models import (  # noqa: E402
    assert_matches_reference, machines, one_node_model,
)

pytestmark = pytest.mark.frontend

X = np.random.default_rng(0).standard_normal((1, 2, 4, 5)).astype("float32")


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
    model = one_node_model("Resize", inputs, slots, **attrs)
    assert [p.name_hint for p in from_onnx(model)["main"].params] == list(inputs)
    assert_matches_reference(name, model, inputs, variants, rtol=1e-5, atol=1e-5)


def test_bad_run_time_scales_and_sizes_are_named_errors():
    scaled = one_node_model("Resize", {"x": X, "s": _scales(2, 2)}, ["x", "", "s"], axes=[2, 3])
    sized = one_node_model("Resize", {"x": X, "z": _sizes(3, 3)}, ["x", "", "", "z"], axes=[2, 3])
    for vm in machines(scaled):
        for bad in (_scales(-2, 2), _scales(0, 2), _scales(np.nan, 1), _scales(1, np.inf)):
            with pytest.raises(ValueError, match="resize_scales_positive_and_finite"):
                vm["main"](X, bad)
    for vm in machines(sized):
        with pytest.raises(ValueError, match="resize_sizes_non_negative"):
            vm["main"](X, _sizes(3, -1))
        assert vm["main"](X, _sizes(0, 2)).numpy().shape == (1, 2, 0, 2)


def test_run_time_scales_of_the_wrong_length_are_refused_at_import():
    model = one_node_model("Resize", {"x": X, "s": _scales(2, 2)}, ["x", "", "s"])
    with pytest.raises(ValueError, match="scales must hold 4 factors"):
        from_onnx(model)


@pytest.mark.parametrize("op, opset", [("Upsample", 9), ("Resize", 10)])
def test_upsample_by_run_time_scales_repeats_elements(op, opset):
    """Upsample, and Resize before opset 11 (inputs X and scales), sample as Upsample."""
    model = one_node_model(op, {"x": X, "s": _scales(1, 1, 1, 1)}, opset=opset, mode="nearest")
    for vm in machines(model):
        for scales in ((1, 1, 2, 3), (1, 2, 3, 1)):
            want = X
            for axis, s in enumerate(scales):
                want = np.repeat(want, s, axis=axis)
            np.testing.assert_array_equal(vm["main"](X, _scales(*scales)).numpy(), want)


def _crop(mode, roi_dtype="float32"):
    return one_node_model("Resize", {"x": X, "r": np.array([0.2, 0.1, 0.9, 1.2], roi_dtype),
                                     "z": _sizes(3, 4)}, ["x", "r", "", "z"], axes=[2, 3],
                          mode=mode, coordinate_transformation_mode="tf_crop_and_resize",
                          extrapolation_value=7.0)


# (nearest mode with a run-time roi is left out: scheduling its one fused kernel, every
# step inlined into the gather, runs for more than ten minutes)
@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_a_non_finite_crop_window_is_a_named_error(mode):
    """onnxruntime takes a NaN or infinite roi and returns mode-dependent values, onnx's
    reference NaN; rvm refuses it at run time."""
    for vm in machines(_crop(mode)):
        for bad in ([np.nan, 0.1, 0.9, 1.2], [0.2, 0.1, np.inf, 1.2], [0.2, -np.inf, 0.9, 1]):
            with pytest.raises(ValueError, match="resize_roi_finite"):
                vm["main"](X, np.array(bad, "float32"), _sizes(3, 4))
        assert vm["main"](X, np.array([0, 0, 1, 1], "float32"), _sizes(3, 4)).numpy().shape \
            == (1, 2, 3, 4)  # the VM still runs


@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_a_crop_window_whose_positions_overflow_samples_outside(mode):
    """A float64 roi (-1e308, 0, 1e308, 1) is finite, but its positions along the first axis
    overflow to infinities and NaN (inf - inf): all outside the input, so that axis gives
    the extrapolation value, on both engines."""
    wide = np.array([-1e308, 0, 1e308, 1], "float64")
    for vm in machines(_crop(mode, "float64")):
        got = vm["main"](X, wide, _sizes(3, 4)).numpy()
        np.testing.assert_array_equal(got, np.full((1, 2, 3, 4), 7.0, "float32"))


def test_the_roi_of_other_transforms_is_not_read():
    """Only tf_crop_and_resize reads the roi (as the onnx specification says): a NaN one
    given to another transform changes nothing."""
    model = one_node_model("Resize", {"x": X, "r": np.zeros(4, "float32"), "s": _scales(2, 1.5)},
                           ["x", "r", "s"], axes=[2, 3], mode="linear")
    for vm in machines(model):
        np.testing.assert_array_equal(
            vm["main"](X, np.full(4, np.nan, "float32"), _scales(2, 1.5)).numpy(),
            vm["main"](X, np.zeros(4, "float32"), _scales(2, 1.5)).numpy())
