"""Zero-copy exchange through DLPack with numpy and torch."""
import numpy as np
import pytest

import rvm
from rvm.runtime.ndarray import array, from_dlpack


def test_numpy_to_rvm_shares_memory():
    src = np.zeros((2, 3), "float32")
    t = from_dlpack(src)
    assert t.data_ptr == src.ctypes.data
    np.from_dlpack(t)[1, 2] = 7
    assert src[1, 2] == 7
    src[0, 0] = 3
    assert t.numpy()[0, 0] == 3


def test_rvm_to_numpy_shares_memory():
    a = array(np.arange(4, dtype="int64"))
    view = np.from_dlpack(a)
    view[0] = 99
    assert a.numpy()[0] == 99
    del a
    assert view[0] == 99  # the exported capsule keeps the memory alive


def test_rejected_tensors():
    ro = np.zeros(3)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        from_dlpack(ro)
    with pytest.raises(ValueError, match="C-contiguous"):
        from_dlpack(np.zeros((4, 4))[:, ::2])
    capsule = np.zeros(2).__dlpack__()
    from_dlpack(capsule)
    with pytest.raises(TypeError, match="unused DLPack capsule"):
        from_dlpack(capsule)


def test_torch_both_ways():
    torch = pytest.importorskip("torch")
    x = torch.zeros(5, 6)
    t = rvm.nd.from_dlpack(x)
    np.from_dlpack(t)[2, 3] = 1.5
    assert x[2, 3].item() == 1.5
    a = array(np.arange(6, dtype="float32"))
    y = torch.from_dlpack(a)
    y[0] = -1
    assert a.numpy()[0] == -1
    np.testing.assert_array_equal(y.numpy(), a.numpy())
