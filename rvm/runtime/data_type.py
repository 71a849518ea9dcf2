"""DataType: element types of tensors and scalars, with numpy and DLPack mappings.

Besides the C types, rvm has narrow element types that exist as storage:
``bfloat16``, the float8 formats, ``float4_e2m1fn`` and the sub-byte integers
``int4``, ``uint4``, ``int2``, ``uint2``. A sub-byte element takes one byte in memory
(its bits in the low ones, the others zero), as numpy arrays of ml_dtypes' types hold
them. Kernels compute narrow floats in float32, rounding to nearest even when
a value is cast or stored (``FLOAT_FORMATS`` describes each format). The numpy
dtypes of the types numpy lacks come from the ``ml_dtypes`` package, imported when
one is first needed.
"""
import re

import numpy as np

from rvm.runtime.dtype_table import (  # noqa: F401 - re-exported names
    BASE_TYPES as _BASE_TYPES, DL_BFLOAT, DL_BOOL, DL_FLOAT, DL_HANDLE, DL_INT, DL_UINT,
    FLOAT_CODES, FLOAT_FORMATS, ML_DTYPES)

_BY_CODE = {v: k for k, v in _BASE_TYPES.items()}
_BY_CODE[(DL_UINT, 1)] = "bool"  # older DLPack producers spell bool as uint1
_PATTERN = re.compile(r"^([a-z]+[0-9]*(?:_e[0-9]+m[0-9]+[a-z]*)?)(?:x([0-9]+))?$")
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
        self._numpy_dtype = None if code == DL_HANDLE or base in ML_DTYPES else np.dtype(base)
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
        """A float type: the IEEE ones, bfloat16, float8 and float4 formats."""
        return self.type_code in FLOAT_CODES

    @property
    def is_narrow_float(self):
        """A float narrower than float32 (computed in float32, stored narrow)."""
        return self.type_code in FLOAT_CODES and self.bits < 32

    @property
    def float_format(self):
        """(exponent bits, mantissa bits, bias, kind) of a narrow float (FLOAT_FORMATS)."""
        return FLOAT_FORMATS[str(self.element_of)]

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
        """The numpy dtype of one lane (ml_dtypes' for the types numpy lacks)."""
        if self._numpy_dtype is None:
            if self.is_handle:
                raise ValueError("dtype 'handle' has no numpy equivalent")
            self._numpy_dtype = ml_dtype(str(self.element_of))
        return self._numpy_dtype

    def __repr__(self):
        return f"DataType({str(self)!r})"

    def __reduce__(self):
        return (DataType, (str(self),))


def ml_dtype(name):
    """The numpy dtype ``name`` from the ml_dtypes package (ImportError saying so when
    it is missing)."""
    try:
        import ml_dtypes
    except ImportError:
        raise ImportError(f"dtype {name} needs the ml_dtypes package (numpy has no {name}); "
                          "install it with: pip install ml_dtypes") from None
    return np.dtype(getattr(ml_dtypes, name))
