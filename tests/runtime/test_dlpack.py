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


def _zero_size_numpy():
    return [np.zeros(0, "float32"), np.zeros((0, 3), "float32"), np.zeros((3, 0), "float32"),
            np.zeros((4, 0), "float32").T, np.zeros((2, 0, 6), "float32")[:, :, ::2]]


def test_a_zero_size_tensor_is_accepted_whatever_its_strides():
    """A tensor without elements has no layout to check: numpy gives it zero strides, torch
    strides computed from its shape and a null data pointer; each is imported, keeps its
    shape and dtype, and goes back out through DLPack."""
    tensors = _zero_size_numpy()
    torch = None
    try:
        import torch
    except ImportError:
        pass
    if torch is not None:
        tensors += [torch.zeros(0), torch.zeros(3, 0), torch.zeros(0, 5).t(),
                    torch.zeros(2, 0, 4)[:, :, ::2], torch.zeros(0, 2, dtype=torch.int64)]
    for src in tensors:
        t = from_dlpack(src)
        assert tuple(t.shape) == tuple(src.shape)
        assert t.numpy().size == 0 and t.numpy().shape == tuple(src.shape)
        assert str(t.numpy().dtype) == str(src.dtype).replace("torch.", "")
        if torch is not None:
            assert tuple(torch.from_dlpack(t).shape) == tuple(src.shape)
    with pytest.raises(ValueError, match="C-contiguous"):  # a strided view with elements
        from_dlpack(np.zeros((2, 1, 6), "float32")[:, :, ::2])


@pytest.mark.parametrize("engine", ["python", "native"])
def test_a_kernel_runs_on_an_imported_zero_size_tensor(engine):
    from rvm import relax
    from rvm.script import ir as I, relax as R
    torch = pytest.importorskip("torch")

    @I.ir_module
    class AddOne:
        @R.function
        def main(x: R.Tensor(("n", 3), "float32")):
            with R.dataflow():
                y = R.add(x, R.const(1.0, "float32"))
                R.output(y)
            return y

    vm = relax.VirtualMachine(relax.build(AddOne, target="c"), rvm.cpu(), engine=engine)
    for src in (torch.zeros(0, 3), np.zeros((0, 3), "float32")):
        assert vm["main"](from_dlpack(src)).numpy().shape == (0, 3)
    assert vm["main"](from_dlpack(torch.ones(2, 3))).numpy().tolist() == [[2.0] * 3] * 2
