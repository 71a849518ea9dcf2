"""NDArray: allocation, copies, views, numpy interop."""
import numpy as np
import pytest

import rvm
from rvm.runtime.ndarray import NDArray, array, empty

ALL_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float16", "float32", "float64"]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_round_trip_every_dtype(dtype):
    src = (np.arange(12) % 3).astype(dtype).reshape(3, 4)
    a = array(src)
    assert a.dtype == dtype and a.shape == (3, 4) and a.ndim == 2
    out = a.numpy()
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, src)


def test_storage_is_aligned_and_owned():
    for n in (1, 3, 17, 1000):
        a = empty((n,), "int8")
        assert a.data_ptr % 64 == 0
        assert a._owns_memory


def test_numpy_returns_a_copy():
    a = array(np.zeros(3, "float32"))
    a.numpy()[0] = 5
    assert a.numpy()[0] == 0


def test_copyto_copyfrom():
    a = array(np.arange(6, dtype="float32").reshape(2, 3))
    b = empty((2, 3), "float32")
    assert a.copyto(b) is b
    np.testing.assert_array_equal(b.numpy(), a.numpy())
    c = a.copyto(rvm.cpu(0))
    assert isinstance(c, NDArray) and c.handle != a.handle
    b.copyfrom(np.ones((2, 3)))
    np.testing.assert_array_equal(b.numpy(), np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"shape mismatch, expected \(2, 3\), got \(3, 2\)"):
        b.copyfrom(np.ones((3, 2)))
    with pytest.raises(ValueError, match="dtype mismatch, expected float32, got int32"):
        b.copyfrom(empty((2, 3), "int32"))
    with pytest.raises(TypeError, match="expects an NDArray or a Device"):
        a.copyto("cpu")


def test_scalars_and_empty_shapes():
    s = array(np.float32(3.5))
    assert s.shape == () and s.numpy() == 3.5
    z = empty((0, 4), "float32")
    assert z.shape == (0, 4) and z.numpy().shape == (0, 4)


def test_views_share_memory_and_keep_it_alive():
    a = array(np.arange(8, dtype="float32"))
    v = a.view((2, 2), byte_offset=16)
    del a
    np.testing.assert_array_equal(v.numpy(), [[4, 5], [6, 7]])
    with pytest.raises(ValueError, match="does not fit"):
        v.view((5,))
    w = v.view((4,), "int32")
    assert w.dtype == "int32"


def test_bad_arguments():
    with pytest.raises(ValueError, match="negative"):
        empty((2, -1))
    with pytest.raises(TypeError, match="shape must be a sequence of ints"):
        empty((2.5,))
    with pytest.raises(ValueError, match="unknown dtype 'float8'"):
        empty((2,), "float8")
    with pytest.raises(TypeError, match="Python objects"):
        array([object()])
    with pytest.raises(ValueError, match="not supported"):
        empty((2,), device=rvm.Device("cuda", 0))
    with pytest.raises(TypeError, match="expected a Device, got str"):
        empty((2,), device="cpu")


def test_repr_and_device():
    a = array(np.zeros((1, 2), "float32"))
    assert a.device == rvm.cpu(0)
    assert a.__dlpack_device__() == (1, 0)
    assert repr(a).startswith("<rvm.nd.NDArray shape=(1, 2), float32, cpu(0)>")


def test_setitem_full_slice_and_parts():
    """TVM's ``b[:] = value`` (NDArray, numpy array, list or scalar); other indices write a part."""
    b = empty((2, 3), "float32")
    b[:] = np.arange(6, dtype="float64").reshape(2, 3)
    np.testing.assert_array_equal(b.numpy(), np.arange(6).reshape(2, 3))
    b[:] = array(np.ones((2, 3), "float32"))
    b[:] = 0
    b[1, 2] = 7
    b[0] = [1, 2, 3]
    np.testing.assert_array_equal(b.numpy(), [[1, 2, 3], [0, 0, 7]])
    with pytest.raises(ValueError, match=r"shape mismatch, expected \(2, 3\), got \(3,\)"):
        b[:] = np.ones(3)
    with pytest.raises(IndexError, match="a\\[5\\] = value"):
        b[5] = 1
    with pytest.raises(TypeError, match="cannot store dict"):
        b[:] = {"a": 1}
