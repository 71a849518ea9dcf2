"""String tensors (ONNX element type STRING) in the importer.

Relax tensors have numeric dtypes, so a string tensor is a ``StringTensor``: its strings
(a numpy unicode array) when known at import, else a Relax value (``R.Object``) holding
the runtime string tensor, a numpy array of str (``rvm.vm.builtins_string``). Operators on
strings fold at import when their inputs are constants and otherwise call the
``vm.builtin.string_*`` builtins, which both VM engines run; a string constant a program
needs at run time is built by ``vm.builtin.string_tensor`` from string constants of the
executable, so a saved executable holds strings only as checked constants. Equal and
Identity take string tensors; the other operators refuse them naming the node.
"""
import numpy as np

from rvm.relax.frontend.onnx.common import OnnxImportError
from rvm.relax.expr import ShapeExpr, StringImm
from rvm.relax.op.base import call_pure_packed
from rvm.relax.struct_info import TensorStructInfo
from rvm.tir.expr import Var as TirVar

#: TensorProto.STRING
STRING = 8


class StringTensor:
    """A tensor of strings: ``array`` (numpy, dtype kind ``U``) when known at import, else
    ``expr`` (the Relax value holding it at run time) with the dims ``shape`` (ints, ``tir``
    variables; None when the rank is unknown)."""

    def __init__(self, array=None, expr=None, shape=None):
        if (array is None) == (expr is None):
            raise ValueError("a StringTensor has an array or an expr, not both")
        self.array, self.expr = array, expr
        self.shape = list(array.shape) if array is not None else shape

    def __repr__(self):
        return f"StringTensor({'constant' if self.array is not None else 'run time'})"


def string_value(proto):
    """A STRING TensorProto as a constant StringTensor (its bytes decoded as UTF-8)."""
    try:
        values = [b.decode("utf-8") for b in proto.string_data]
    except UnicodeDecodeError as err:
        raise OnnxImportError(f"tensor '{proto.name}': a string is not UTF-8: {err}") from None
    dims = [int(d) for d in proto.dims]
    if int(np.prod(dims, dtype=np.int64)) != len(values):
        raise OnnxImportError(f"tensor '{proto.name}': dims {dims} need "
                              f"{int(np.prod(dims))} strings, got {len(values)}")
    return StringTensor(array=np.array(values, dtype=str).reshape(dims))


def string_input(ctx, tensor_type, var):
    """The StringTensor of a graph input ``var`` of the ONNX tensor type ``tensor_type``."""
    shape = None
    if tensor_type.HasField("shape"):
        shape = [int(d.dim_value) if d.HasField("dim_value") else
                 ctx.symbolic_dim(d.dim_param) if d.dim_param else None
                 for d in tensor_type.shape.dim]
    return StringTensor(expr=var, shape=shape)


def string_expr(value):
    """The Relax expression of a StringTensor (a constant built at run time)."""
    if value.expr is not None:
        return value.expr
    flat = [StringImm(str(s)) for s in value.array.reshape(-1)]
    return call_pure_packed("vm.builtin.string_tensor", ShapeExpr(list(value.array.shape)),
                            *flat)


def _broadcast(lhs, rhs):
    """The static broadcast shape of two StringTensors, or None when not known at import."""
    if lhs.shape is None or rhs.shape is None or \
            not all(isinstance(d, int) for d in lhs.shape + rhs.shape):
        return None
    try:
        return list(np.broadcast_shapes(tuple(lhs.shape), tuple(rhs.shape)))
    except ValueError:
        raise OnnxImportError(f"shapes {lhs.shape} and {rhs.shape} do not broadcast") from None


def convert_strings(ctx, op_type, lhs, rhs):
    """A binary operator ``op_type`` with a string operand (only Equal takes strings)."""
    if op_type != "Equal":
        raise OnnxImportError(f"{op_type} does not take string tensors (of the operators "
                              "rvm converts, Equal and Identity do)")
    if not isinstance(lhs, StringTensor) or not isinstance(rhs, StringTensor):
        raise OnnxImportError("Equal compares a string tensor with a tensor of numbers; "
                              "expected two string tensors")
    shape = _broadcast(lhs, rhs)
    if lhs.array is not None and rhs.array is not None:
        return np.asarray(np.char.equal(lhs.array, rhs.array))
    if shape is not None:
        sinfo = TensorStructInfo(shape, "bool")
    elif lhs.shape is not None and rhs.shape is not None:
        sinfo = TensorStructInfo(ndim=max(len(lhs.shape), len(rhs.shape)), dtype="bool")
    else:
        sinfo = TensorStructInfo(ndim=-1, dtype="bool")
    out = ctx.emit(call_pure_packed("vm.builtin.string_equal", string_expr(lhs),
                                    string_expr(rhs), sinfo_args=sinfo), "equal")
    if shape is None and sinfo.ndim >= 0:
        dims = [TirVar(f"equal_d{k}", "int64") for k in range(sinfo.ndim)]
        out = ctx.bb.match_cast(out, TensorStructInfo(dims, "bool"))
    return out
