"""Constant-pool values: their deduplication keys, serialized form and short descriptions.

The pool holds NDArrays, shapes, strings, bytes, ints, floats, bools, None,
dtypes and devices. On disk each constant is ``[tag, payload]``; an NDArray's
payload is ``[dtype, shape, raw bytes]``.

>>> decode_constant(encode_constant(ShapeTuple((2, 3))))
ShapeTuple((2, 3))
"""
import math
import struct

from rvm.bytecode.errors import ExecutableFormatError
from rvm.runtime.container import ShapeTuple
from rvm.runtime.data_type import DataType
from rvm.runtime.device import Device
from rvm.runtime.ndarray import NDArray, empty

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
MAX_NDIM = 64


def constant_tag(value):
    """The pool tag of a value; TypeError for a type the pool does not hold."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, NDArray):
        return "ndarray"
    if isinstance(value, ShapeTuple):
        return "shape"
    if isinstance(value, DataType):
        return "dtype"
    if isinstance(value, Device):
        return "device"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, (bytes, bytearray)):
        return "bytes"
    raise TypeError(f"constant pool cannot hold a {type(value).__name__}; expected NDArray, "
                    f"ShapeTuple, DataType, Device, str, bytes, int, float, bool or None")


def encode_constant(value):
    """The ``[tag, payload]`` msgpack form of a pool value."""
    tag = constant_tag(value)
    if tag == "ndarray":
        data = bytes(memoryview(value).cast("B")) if value.size else b""
        return [tag, [str(value.dtype), list(value.shape), data]]
    if tag == "shape":
        return [tag, list(value)]
    if tag == "dtype":
        return [tag, str(value)]
    if tag == "device":
        return [tag, [value.device_type, value.device_id]]
    if tag == "int":
        if not INT64_MIN <= value <= INT64_MAX:
            raise ValueError(f"integer constant {value} does not fit in int64")
        return [tag, int(value)]
    if tag == "float":
        return [tag, float(value)]
    if tag == "bytes":
        return [tag, bytes(value)]
    return [tag, value]


def constant_key(value):
    """A hashable key equal for equal constants (NDArrays by dtype, shape and bytes)."""
    tag, payload = encode_constant(value)
    if tag == "ndarray":
        return (tag, payload[0], tuple(payload[1]), payload[2])
    if tag == "float":
        return (tag, struct.pack("<d", payload))  # keeps -0.0 and NaNs apart from 0.0
    if isinstance(payload, list):
        return (tag, tuple(payload))
    return (tag, payload)


def _expect(cond, index, message):
    if not cond:
        raise ExecutableFormatError(f"corrupted section 'constants': constant {index}: {message}")


def _is_int(x):
    """An int64 (msgpack also carries uint64, which the runtime cannot hold)."""
    return type(x) is int and -(1 << 63) <= x < (1 << 63)


_SCALAR_CHECKS = {"int": _is_int, "float": lambda x: type(x) is float,
                  "str": lambda x: type(x) is str, "bytes": lambda x: type(x) is bytes,
                  "bool": lambda x: type(x) is bool, "none": lambda x: x is None}


def decode_constant(entry, index=0):
    """The pool value of a ``[tag, payload]`` entry; ExecutableFormatError if malformed."""
    _expect(isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str), index,
            f"expected [tag, payload], got {type(entry).__name__}")
    tag, payload = entry
    if tag == "ndarray":
        _expect(isinstance(payload, list) and len(payload) == 3, index,
                "ndarray payload must be [dtype, shape, bytes]")
        dtype_name, shape, data = payload
        _expect(isinstance(dtype_name, str), index, "ndarray dtype must be a string")
        try:
            dtype = DataType(dtype_name)
        except ValueError as err:
            raise ExecutableFormatError(
                f"corrupted section 'constants': constant {index}: {err}") from None
        _expect(not dtype.is_handle, index, "ndarray dtype 'handle' cannot be a constant")
        _expect(isinstance(shape, list) and len(shape) <= MAX_NDIM
                and all(_is_int(d) and 0 <= d <= INT64_MAX for d in shape), index,
                f"ndarray shape must be at most {MAX_NDIM} non-negative ints, got {shape!r}")
        _expect(isinstance(data, bytes), index, "ndarray data must be bytes")
        nbytes = math.prod(shape) * dtype.itemsize
        _expect(nbytes == len(data), index,
                f"ndarray {dtype}{shape} needs {nbytes} bytes, found {len(data)}")
        out = empty(shape, dtype)
        if data:
            memoryview(out).cast("B")[:] = data
        return out
    if tag == "shape":
        _expect(isinstance(payload, list) and all(_is_int(d) for d in payload)
                and len(payload) <= MAX_NDIM, index, f"shape must be a list of ints, "
                f"got {payload!r:.80}")
        return ShapeTuple(payload)
    if tag == "dtype":
        _expect(isinstance(payload, str), index, "dtype must be a string")
        try:
            return DataType(payload)
        except ValueError as err:
            raise ExecutableFormatError(
                f"corrupted section 'constants': constant {index}: {err}") from None
    if tag == "device":
        _expect(isinstance(payload, list) and len(payload) == 2
                and all(_is_int(x) and 0 <= x < (1 << 31) for x in payload), index,
                "device must be [device_type, device_id]")
        return Device(*payload)
    checks = _SCALAR_CHECKS
    _expect(tag != "int" or type(payload) is not int or _is_int(payload), index,
            f"int constant {payload} is outside int64")
    _expect(tag in checks, index, f"unknown tag {tag!r}; expected one of "
            f"{', '.join(['ndarray', 'shape', 'dtype', 'device'] + list(checks))}")
    _expect(checks[tag](payload), index, f"{tag} constant has a {type(payload).__name__} value")
    # The engines pass strings to C as NUL-terminated text: one with a NUL would mean one
    # thing to the python engine and another (or a link error) to the native one.
    if tag == "str":
        _expect("\x00" not in payload, index,
                f"str constant holds a NUL character at {payload.find(chr(0))}")
    return payload


def describe_constant(value, limit=40):
    """A short one-line description for disassembly: ``float32[2, 3]``, ``shape(1, 4)``."""
    tag = constant_tag(value)
    if tag == "ndarray":
        return f"{value.dtype}[{', '.join(str(d) for d in value.shape)}]"
    if tag == "shape":
        return f"shape({', '.join(str(d) for d in value)})"
    if tag == "dtype":
        return f"dtype {value}"
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."

