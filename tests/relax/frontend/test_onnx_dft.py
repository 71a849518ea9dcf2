"""ONNX DFT (matrix products built from numpy's FFT): forward, inverse, one-sided, the
inverse of a one-sided transform and dft_length match numpy in float64; an axis fed at
run time picks its transform, and one out of range fails at run time."""
import numpy as np
import pytest

import rvm
from rvm import relax

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from rvm.relax.frontend.onnx import from_onnx  # noqa: E402

pytestmark = pytest.mark.frontend


def _model(shape, axis=None, length=None, **attrs):
    inputs = [helper.make_tensor_value_info("x", TensorProto.DOUBLE, shape)]
    inits = []
    names = ["x", "", ""]
    if length is not None:
        inits.append(numpy_helper.from_array(np.array(length, "int64"), "n"))
        names[1] = "n"
    if axis == "fed":
        inputs.append(helper.make_tensor_value_info("axis", TensorProto.INT64, []))
        names[2] = "axis"
    elif axis is not None:
        inits.append(numpy_helper.from_array(np.array(axis, "int64"), "axis"))
        names[2] = "axis"
    node = helper.make_node("DFT", names, ["y"], **attrs)
    graph = helper.make_graph([node], "g", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)],
                              initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])


def _run(model, *args):
    return relax.VirtualMachine(relax.build(from_onnx(model)), rvm.cpu())["main"](*args)


def _pair(z):
    return np.stack([z.real, z.imag], axis=-1)


_X = np.random.default_rng(0).standard_normal((3, 5, 2))
_Z = _X[..., 0] + 1j * _X[..., 1]


@pytest.mark.parametrize("attrs, length, want", [
    ({}, None, _pair(np.fft.fft(_Z, axis=1))),
    ({"inverse": 1}, None, _pair(np.fft.ifft(_Z, axis=1))),
    ({}, 7, _pair(np.fft.fft(_Z, n=7, axis=1))),
    ({"onesided": 1}, 3, _pair(np.fft.fft(_Z, n=3, axis=1)[:, :2])),
    ({"inverse": 1, "onesided": 1}, None, np.fft.irfft(_Z, axis=1)[..., None]),
])
def test_dft_matches_numpy(attrs, length, want):
    got = _run(_model([3, 5, 2], axis=1, length=length, **attrs), _X).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


def test_an_axis_fed_at_run_time_picks_its_transform_and_is_checked():
    model = _model([3, 5, 2], axis="fed")
    for axis in (0, 1, -2, -3):
        got = _run(model, _X, np.array(axis, "int64")).numpy()
        np.testing.assert_allclose(got, _pair(np.fft.fft(_Z, axis=axis % 3)), atol=1e-10)
    with pytest.raises(ValueError, match="dft_axis_in_range"):
        _run(model, _X, np.array(2, "int64"))
