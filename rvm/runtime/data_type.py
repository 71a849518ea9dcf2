"""DataType: element types of tensors and scalars, with numpy and DLPack mappings."""
import re

import numpy as np

# DLPack type codes.
DL_INT, DL_UINT, DL_FLOAT, DL_HANDLE, DL_BOOL = 0, 1, 2, 3, 6

_BASE_TYPES = {
    "bool": (DL_BOOL, 8),
    "int8": (DL_INT, 8),
    "int16": (DL_INT, 16),
    "int32": (DL_INT, 32),
    "int64": (DL_INT, 64),
    "uint8": (DL_UINT, 8),
    "uint16": (DL_UINT, 16),
    "uint32": (DL_UINT, 32),
    "uint64": (DL_UINT, 64),
    "float16": (DL_FLOAT, 16),
    "float32": (DL_FLOAT, 32),
    "float64": (DL_FLOAT, 64),
    "handle": (DL_HANDLE, 64),
}
_BY_CODE = {v: k for k, v in _BASE_TYPES.items()}
_BY_CODE[(DL_UINT, 1)] = "bool"  # older DLPack producers spell bool as uint1
_PATTERN = re.compile(r"^([a-z]+[0-9]*)(?:x([0-9]+))?$")
ACCEPTED_FORMS = (
    "one of " + ", ".join(k for k in _BASE_TYPES if k != "handle")
    + ", 'handle', optionally with lanes ('float32x4'), or a numpy dtype"
)
_INTERNED = {}  # name -> DataType
_BY_TRIPLE = {}  # (code, bits, lanes) -> DataType


def _parse(name):
    match = _PATTERN.match(name)
    base = match.group(1) if match else None
    if base not in _BASE_TYPES:
        raise ValueError(f"unknown dtype {name!r}; expected {ACCEPTED_FORMS}")
    lanes = int(match.group(2)) if match.group(2) else 1
    if lanes < 1 or lanes > 65535:
        raise ValueError(f"dtype {name!r}: lanes must be in [1, 65535]")
    code, bits = _BASE_TYPES[base]
    return code, bits, lanes


class DataType(str):
    """An element type, equal to its name: ``DataType("float32") == "float32"``.

    Instances are interned (one object per name) and carry their DLPack
    triple as plain attributes, so hot paths pay no parsing.

    >>> DataType("float32").bits
    32
    >>> DataType(np.dtype("int8")).numpy_dtype
    dtype('int8')
    """

    def __new__(cls, value):
        interned = _INTERNED.get(value) if isinstance(value, str) else None
        if interned is not None:
            return interned
        if isinstance(value, DataType):
            return value
        if not isinstance(value, str):
            try:
                value = np.dtype(value).name
            except TypeError:
                raise ValueError(
                    f"unknown dtype {value!r} of type {type(value).__name__}; "
                    f"expected {ACCEPTED_FORMS}") from None
            if value in _INTERNED:
                return _INTERNED[value]
        code, bits, lanes = _parse(value)
        self = str.__new__(cls, value)
        self.type_code = code
        self.bits = bits
        self.lanes = lanes
        base = _BY_CODE[(code, bits)]
        self._numpy_dtype = None if code == DL_HANDLE else np.dtype(base)
        _INTERNED[value] = self
        _BY_TRIPLE[(code, bits, lanes)] = self
        return self

    @classmethod
    def from_dlpack(cls, code, bits, lanes=1):
        """The DataType of a DLPack (code, bits, lanes) triple."""
        known = _BY_TRIPLE.get((code, bits, lanes))
        if known is not None:
            return known
        base = _BY_CODE.get((code, bits))
        if base is None:
            raise ValueError(f"unsupported DLPack dtype code={code} bits={bits}; expected {ACCEPTED_FORMS}")
        return cls(base if lanes == 1 else f"{base}x{lanes}")

    @property
    def itemsize(self):
        """Bytes per element (all lanes)."""
        return (self.bits * self.lanes + 7) // 8

    @property
    def element_of(self):
        """The scalar type of a vector type (float32x4 -> float32)."""
        return DataType(_BY_CODE[(self.type_code, self.bits)])

    def with_lanes(self, lanes):
        return DataType(str(self.element_of) if lanes == 1 else f"{self.element_of}x{lanes}")

    @property
    def is_float(self):
        return self.type_code == DL_FLOAT

    @property
    def is_int(self):
        return self.type_code == DL_INT

    @property
    def is_uint(self):
        return self.type_code == DL_UINT

    @property
    def is_bool(self):
        return self.type_code == DL_BOOL

    @property
    def is_handle(self):
        return self.type_code == DL_HANDLE

    @property
    def numpy_dtype(self):
        """The numpy dtype of one lane."""
        if self._numpy_dtype is None:
            raise ValueError("dtype 'handle' has no numpy equivalent")
        return self._numpy_dtype

    def __repr__(self):
        return f"DataType({str(self)!r})"

    def __reduce__(self):
        return (DataType, (str(self),))
