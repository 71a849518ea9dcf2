"""Device: where a tensor lives, in DLPack's (device_type, device_id) terms.

rvm runs on the CPU; the other devices exist as values (``cuda(0)`` compares, hashes and
prints as TVM's does) whose ``exist`` is False, and tensors refuse them with an error
naming the device.
"""

_NAMES = {1: "cpu", 2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan", 8: "metal",
          10: "rocm"}
_TYPES = {v: k for k, v in _NAMES.items()}


class Device:
    """A device, such as ``cpu(0)``.

    >>> cpu(0) == Device(1, 0)
    True
    """

    __slots__ = ("device_type", "device_id")
    CPU = 1

    def __init__(self, device_type, device_id=0):
        if isinstance(device_type, str):
            if device_type not in _TYPES:
                raise ValueError(f"unknown device {device_type!r}; expected one of {sorted(_TYPES)}")
            device_type = _TYPES[device_type]
        self.device_type = int(device_type)
        self.device_id = int(device_id)

    @property
    def type_name(self):
        return _NAMES.get(self.device_type, f"device{self.device_type}")

    @property
    def exist(self):
        """Whether this device is present: only the CPU is.

        >>> cpu(0).exist, cuda(0).exist
        (True, False)
        """
        return self.device_type == Device.CPU

    def __eq__(self, other):
        return (isinstance(other, Device) and self.device_type == other.device_type
                and self.device_id == other.device_id)

    def __hash__(self):
        return hash((self.device_type, self.device_id))

    def __repr__(self):
        return f"{self.type_name}({self.device_id})"

    def __dlpack_device__(self):
        return (self.device_type, self.device_id)


def cpu(dev_id=0):
    """The CPU device."""
    return Device(Device.CPU, dev_id)


def cuda(dev_id=0):
    """A CUDA device (absent: rvm runs on the CPU; ``exist`` is False)."""
    return Device(2, dev_id)


def opencl(dev_id=0):
    """An OpenCL device (absent, as ``cuda``)."""
    return Device(4, dev_id)


def vulkan(dev_id=0):
    """A Vulkan device (absent, as ``cuda``)."""
    return Device(7, dev_id)


def metal(dev_id=0):
    """A Metal device (absent, as ``cuda``)."""
    return Device(8, dev_id)


def rocm(dev_id=0):
    """A ROCm device (absent, as ``cuda``)."""
    return Device(10, dev_id)


def device(name, dev_id=None):
    """A device by name: ``device("cpu")``, ``device("cpu", 0)`` or ``device("cpu:0")``."""
    if isinstance(name, Device):
        return name
    if ":" in name:
        name, _, dev_id_text = name.partition(":")
        dev_id = int(dev_id_text)
    return Device(name, dev_id or 0)
