"""What every part of the ONNX importer shares: its errors, the ONNX element types as rvm
dtypes, and helpers over values known at import (numpy arrays, dimensions).

A numpy array of dtype ``object`` holds dimensions that are ``tir`` expressions: ``Shape``
of a tensor with a symbolic dimension gives one, and the shape arithmetic that follows
(Gather, Concat, Unsqueeze, Mul ...) keeps them symbolic until a ``Reshape``, ``Expand``
or ``ConstantOfShape`` consumes them.
"""
import numpy as np

from rvm.ir.expr import PrimExpr
from rvm.runtime.data_type import DataType
from rvm.tir.arith import Analyzer
from rvm.tir.expr import IntImm, Range
from rvm.tir.free_vars import free_vars
from rvm.tir.op import min_value

#: ONNX TensorProto element types -> rvm dtype names (the types rvm computes with; the
#: narrow ones from bfloat16 on need the ml_dtypes package, as onnx itself does).
ONNX_DTYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32",
               7: "int64", 9: "bool", 10: "float16", 11: "float64", 12: "uint32",
               13: "uint64", 16: "bfloat16", 17: "float8_e4m3fn", 18: "float8_e4m3fnuz",
               19: "float8_e5m2", 20: "float8_e5m2fnuz", 21: "uint4", 22: "int4",
               23: "float4_e2m1fn", 24: "float8_e8m0fnu", 25: "uint2", 26: "int2"}
#: The default-domain opset assumed when a model names none.
DEFAULT_OPSET = 13


class OnnxImportError(ValueError):
    """A model the importer cannot translate; the message names the node."""


class ConstantRequired(OnnxImportError):
    """An operand that decides an output's shape is a graph input, known only at run time;
    ``input_name`` names that input (binding it, e.g. as an initializer, imports the model)."""

    def __init__(self, message, input_name):
        super().__init__(message)
        self.input_name = input_name


def onnx_dtype(elem_type, what):
    """The rvm dtype of an ONNX element type (OnnxImportError naming ``what`` otherwise)."""
    if elem_type not in ONNX_DTYPES:
        import onnx  # the model came through onnx, so it is installed

        name = onnx.TensorProto.DataType.Name(elem_type) if elem_type in \
            onnx.TensorProto.DataType.values() else str(elem_type)
        raise OnnxImportError(f"{what}: element type {name} is not supported; expected one of "
                              f"{sorted(set(ONNX_DTYPES.values()))}")
    return ONNX_DTYPES[elem_type]


def is_float(dtype):
    """Whether the rvm dtype name ``dtype`` is a float type (bfloat16 and float8 too)."""
    return DataType(dtype).is_float


def lowest(dtype):
    """The lowest finite value of the rvm dtype ``dtype``."""
    return min_value(dtype).value


def dims_of(shape):
    """A shape's dimensions as ints where they are constant, ``tir`` expressions otherwise."""
    out = []
    for d in shape:
        value = getattr(d, "value", None)
        out.append(int(value) if isinstance(d, PrimExpr) and isinstance(value, int) else d)
    return out


def all_static(values):
    """Whether every dimension of the object array ``values`` is a constant."""
    return all(isinstance(getattr(v, "value", v), (int, np.integer))
               for v in values.reshape(-1))


def static_array(values, what):
    """An object array of dimensions as int64, when every dimension is constant."""
    flat = [getattr(v, "value", v) for v in values.reshape(-1)]
    if not all(isinstance(v, (int, np.integer)) for v in flat):
        raise OnnxImportError(f"{what} has symbolic dimensions "
                              f"{[str(v) for v in values.reshape(-1)]}; it cannot be used as a "
                              "tensor")
    return np.array(flat, "int64").reshape(values.shape)


def decide_dims(cond):
    """A condition over dimensions (a ``tir`` boolean expression) decided at import: True,
    False, or None when it depends on their values. Every variable in it is a tensor
    dimension, so it is taken to be non-negative."""
    analyzer = Analyzer()
    for var in free_vars(cond):
        analyzer.bind(var, Range(0, 1 << 62))
    decided = analyzer.simplify(cond)
    return bool(decided.value) if isinstance(decided, IntImm) else None


def attributes(node):
    """An ONNX node's attributes by name, as Python values (strings decoded)."""
    from onnx import helper

    out = {}
    for attr in node.attribute:
        value = helper.get_attribute_value(attr)
        if isinstance(value, bytes):
            value = value.decode()
        elif isinstance(value, list):
            value = [v.decode() if isinstance(v, bytes) else v for v in value]
        out[attr.name] = value
    return out


def opset_of(model, opset):
    """The default-domain opset: ``opset`` when given, else the model's, else the default."""
    if opset is not None:
        return int(opset)
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return int(entry.version)
    return DEFAULT_OPSET
