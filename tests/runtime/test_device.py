"""Device identity and naming."""
import pytest

import rvm
from rvm.runtime.device import Device, cpu, device


def test_cpu():
    assert cpu() == cpu(0) == Device(1, 0) == Device("cpu")
    assert cpu(1) != cpu(0) and hash(cpu(0)) == hash(Device(1, 0))
    assert repr(cpu(0)) == "cpu(0)" and cpu().__dlpack_device__() == (1, 0)


def test_device_by_name():
    assert device("cpu:1") == cpu(1) and device("cpu", 0) == cpu(0)
    assert rvm.device("cpu") == rvm.cpu()
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        device("tpu")
