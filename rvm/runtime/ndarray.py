"""NDArray: rvm's tensor, a 64-byte aligned buffer with a DLPack view."""
import numpy as np

from rvm.runtime._ffi import _bridge
from rvm.runtime.container import ShapeTuple
from rvm.runtime.data_type import ML_DTYPES, DataType
from rvm.runtime.device import Device, cpu


class NDArray(_bridge.NDArrayBase):
    """A C-contiguous tensor on a device.

    >>> a = array(np.arange(6, dtype="float32").reshape(2, 3))
    >>> a.shape, a.dtype, a.device
    (ShapeTuple((2, 3)), DataType('float32'), cpu(0))
    """

    __slots__ = ()

    @property
    def shape(self):
        return tuple.__new__(ShapeTuple, self._shape)  # ints from C: no need to check them

    @property
    def dtype(self):
        return DataType.from_dlpack(*self._dtype_tuple)

    @property
    def device(self):
        return Device(*self._device_tuple)

    @property
    def size(self):
        n = 1
        for d in self._shape:
            n *= d
        return n

    @property
    def nbytes(self):
        return self.size * self.dtype.itemsize

    @property
    def is_view(self):
        """Whether this tensor views memory it does not own: another NDArray's (``view``),
        a DLTensor a C caller lent to a callback, or a DLPack producer's (TVM's ``is_view``
        is True for the lent DLTensor only).

        >>> a = array(np.zeros((2, 2), "float32"))
        >>> a.is_view, a.view((4,)).is_view
        (False, True)
        """
        return not self._owns_memory

    def numpy(self):
        """A numpy copy of the tensor."""
        return np.array(self._numpy_view(), copy=True)

    def _numpy_view(self):
        dtype = self.dtype
        if dtype.lanes != 1 or dtype.is_handle:
            raise ValueError(f"dtype {dtype} has no numpy equivalent")
        view = np.asarray(memoryview(self))
        if dtype in ML_DTYPES:  # the buffer holds raw bytes: ml_dtypes' dtype reads them
            view = view.view(dtype.numpy_dtype)
        return view

    def copyfrom(self, source):
        """Copies ``source`` (an NDArray or anything numpy accepts) into this tensor."""
        if isinstance(source, NDArray):
            if source.dtype != self.dtype:
                raise ValueError(f"copyfrom: dtype mismatch, expected {self.dtype}, got {source.dtype}")
            src = source._numpy_view()
        else:
            src = np.asarray(source, dtype=self.dtype.numpy_dtype)
        if tuple(src.shape) != tuple(self._shape):
            raise ValueError(
                f"copyfrom: shape mismatch, expected {tuple(self._shape)}, got {tuple(src.shape)}")
        np.copyto(self._numpy_view(), src, casting="unsafe")
        return self

    def copyto(self, target):
        """Copies into ``target`` (an NDArray) or to a new NDArray on ``target`` (a Device)."""
        if isinstance(target, NDArray):
            return target.copyfrom(self)
        if isinstance(target, Device):
            return empty(self._shape, self.dtype, target).copyfrom(self)
        raise TypeError(f"copyto expects an NDArray or a Device, got {type(target).__name__}")

    def view(self, shape, dtype=None, byte_offset=0):
        """A tensor of ``shape`` and ``dtype`` sharing this one's memory from ``byte_offset``.

        The view keeps this tensor's memory alive; it must fit inside it.

        >>> a = empty((4,), "float32")
        >>> a.view((2, 2)).shape
        ShapeTuple((2, 2))
        """
        dtype = self.dtype if dtype is None else DataType(dtype)
        try:
            return _bridge.ndarray_view(self, byte_offset, shape, dtype.type_code, dtype.bits,
                                        dtype.lanes)
        except TypeError:
            raise TypeError(f"view: shape must be a sequence of ints, got {shape!r}") from None

    def __setitem__(self, index, value):
        """``a[:] = value`` copies ``value`` (an NDArray, numpy array, list or scalar) into the
        tensor, as TVM's NDArray does; another index writes that part with numpy's indexing.

        >>> a = empty((2, 2), "float32")
        >>> a[:] = np.ones((2, 2))
        >>> a[0, 1] = 5
        >>> a.numpy().tolist()
        [[1.0, 5.0], [1.0, 1.0]]
        """
        if isinstance(value, NDArray):
            value = value._numpy_view()
        view = self._numpy_view()
        if isinstance(index, slice) and index == slice(None):
            src = np.asarray(value)
            if src.dtype == object:
                raise TypeError(f"cannot store {type(value).__name__} in a {self.dtype} tensor")
            if src.ndim and tuple(src.shape) != tuple(self._shape):
                raise ValueError(f"a[:] = value: shape mismatch, expected {tuple(self._shape)}, "
                                 f"got {tuple(src.shape)}")
            np.copyto(view, src, casting="unsafe")
            return
        try:
            view[index] = value
        except (IndexError, ValueError, TypeError) as err:
            raise type(err)(f"a[{index!r}] = value: {err}") from None

    def __dlpack_device__(self):
        return self._device_tuple

    def to_dlpack(self):
        """A DLPack capsule (``"dltensor"``, the pre-1.0 form TVM's ``to_dlpack`` returns)
        sharing this tensor's memory, for ``torch.utils.dlpack.from_dlpack`` and the like."""
        return self.__dlpack__()

    def __repr__(self):
        head = f"<rvm.nd.NDArray shape={tuple(self._shape)}, {self.dtype}, {self.device}>"
        try:
            return head + "\n" + repr(self._numpy_view())
        except ValueError:
            return head

    def __reduce__(self):
        raise TypeError("NDArray is not picklable; save executables with export_library")


_CPU0 = cpu(0)


def _check_device(device):
    device = cpu(0) if device is None else device
    if not isinstance(device, Device):
        raise TypeError(f"expected a Device, got {type(device).__name__}")
    if device.device_type != Device.CPU:
        raise ValueError(f"device {device} is not supported; rvm runs on cpu")
    return device


def empty(shape, dtype="float32", device=None):
    """A new uninitialised tensor."""
    if device is None:
        device = _CPU0
    elif type(device) is not Device or device.device_type != Device.CPU:
        _check_device(device)
    dtype = DataType(dtype)
    try:
        return _bridge.ndarray_empty(shape, dtype.type_code, dtype.bits, dtype.lanes,
                                     device.device_type, device.device_id)
    except TypeError:
        raise TypeError(f"empty: shape must be a sequence of ints, got {shape!r}") from None


def array(data, device=None, dtype=None):
    """A new tensor holding a copy of ``data`` (numpy array, NDArray, nested lists, scalar)."""
    if isinstance(data, NDArray):
        data = data._numpy_view()
    src = np.asarray(data, dtype=DataType(dtype).numpy_dtype if dtype is not None else None)
    if src.dtype == object:
        raise TypeError("array: cannot make a tensor of Python objects")
    out = empty(src.shape, DataType(src.dtype), device)
    np.copyto(out._numpy_view(), src)
    return out


def from_dlpack(tensor):
    """A tensor sharing memory with ``tensor`` (anything with ``__dlpack__``, or a capsule)."""
    if isinstance(tensor, NDArray):
        return tensor
    if hasattr(tensor, "__dlpack__"):
        try:
            capsule = tensor.__dlpack__(max_version=(1, 0))
        except TypeError:  # a producer from before DLPack 1.0
            capsule = tensor.__dlpack__()
    else:
        capsule = tensor
    return _bridge.ndarray_from_dlpack(capsule)
