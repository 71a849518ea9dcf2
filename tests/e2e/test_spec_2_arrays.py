"""SPEC §2, as written: arrays and devices."""
import numpy as np
import pytest


@pytest.mark.parametrize("source", ["numpy", "torch"])
def test_spec_2_program(source):
    import numpy as np, rvm  # noqa: E401  (as in SPEC)

    if source == "torch":
        torch = pytest.importorskip("torch")
        np_or_torch_array = torch.arange(6, dtype=torch.float32)
    else:
        np_or_torch_array = np.arange(6, dtype="float32")

    a = rvm.nd.array(np.arange(6, dtype="float32").reshape(2, 3))   # device=rvm.cpu(0)
    assert a.shape == (2, 3) and a.dtype == "float32" and a.device == rvm.cpu(0)
    np.testing.assert_array_equal(a.numpy(), np.arange(6).reshape(2, 3))   # a numpy copy
    b = rvm.nd.empty((2, 3), "float32"); a.copyto(b)  # noqa: E702
    np.testing.assert_array_equal(b.numpy(), a.numpy())
    t = rvm.nd.from_dlpack(np_or_torch_array)   # zero-copy, shares memory
    np.from_dlpack(t)[0] = 42
    assert float(np_or_torch_array[0]) == 42
    back = np.from_dlpack(a)                    # and back (a implements __dlpack__)
    back[1, 1] = -1
    assert a.numpy()[1, 1] == -1
