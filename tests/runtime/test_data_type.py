"""DataType: parsing, numpy and DLPack mappings."""
import numpy as np
import pytest

from rvm.runtime.data_type import DataType


@pytest.mark.parametrize("name,code,bits", [
    ("bool", 6, 8), ("int8", 0, 8), ("int64", 0, 64), ("uint16", 1, 16), ("float16", 2, 16),
    ("float32", 2, 32), ("float64", 2, 64), ("handle", 3, 64),
])
def test_parse(name, code, bits):
    t = DataType(name)
    assert (t.type_code, t.bits, t.lanes) == (code, bits, 1)
    assert t == name and DataType.from_dlpack(code, bits) == t


def test_lanes():
    t = DataType("float32x4")
    assert t.lanes == 4 and t.itemsize == 16 and t.element_of == "float32"
    assert DataType("float32").with_lanes(8) == "float32x8"
    assert DataType.from_dlpack(2, 32, 4) == "float32x4"


def test_numpy_mapping():
    assert DataType(np.float32) == "float32"
    assert DataType(np.dtype("uint8")).numpy_dtype == np.dtype("uint8")
    assert DataType("bool").numpy_dtype == np.dtype(bool)
    with pytest.raises(ValueError, match="no numpy equivalent"):
        DataType("handle").numpy_dtype


def test_unknown_dtype_lists_accepted_forms():
    with pytest.raises(ValueError, match="unknown dtype 'float128'.*float16, float32, float64"):
        DataType("float128")
    with pytest.raises(ValueError, match="unknown dtype 'complex64'"):
        DataType(np.complex64)
    with pytest.raises(ValueError, match="unsupported DLPack dtype code=5"):
        DataType.from_dlpack(5, 64)
    with pytest.raises(ValueError, match="unknown dtype"):
        DataType(3.5)


def test_predicates():
    assert DataType("float16").is_float and DataType("int8").is_int
    assert DataType("uint8").is_uint and DataType("bool").is_bool
