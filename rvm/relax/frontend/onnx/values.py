"""ONNX values that are not tensors: sequences of tensors and optional values.

A **sequence** whose length is known at import is a list of tensor values (``Sequence``
with ``items``) that becomes a Relax tuple where one is needed, so ``SequenceAt``,
``SequenceInsert`` or ``ConcatFromSequence`` at constant positions are tuple accesses
and tensor operators. A sequence whose length is known only at run time (a graph input,
one grown in a loop) is a Relax value (``expr``, struct info ``R.Object`` or a tuple)
holding the runtime tuple; its operators call the ``vm.builtin.sequence_*`` builtins.

An **optional** is a value or None: ``Optional`` with ``value`` when it is known to hold
one, neither ``value`` nor ``expr`` when it is known empty (``R.null_value()``), and
``expr`` when that is known only at run time (an ``R.Object`` that is None or the value).

``TypeDesc`` is an ONNX type (``TypeProto``) as the importer needs it: the kind of value,
the element dtype and the tensor shape.
"""
from typing import NamedTuple

import numpy as np

from rvm.relax.frontend.onnx.common import OnnxImportError, onnx_dtype
from rvm.relax.frontend.onnx.strings import STRING, StringTensor, string_expr, string_value
from rvm.relax.expr import Tuple, TupleGetItem
from rvm.relax.op.memory import null_value
from rvm.relax.struct_info import TensorStructInfo, TupleStructInfo
from rvm.tir.expr import Var as TirVar


class TypeDesc(NamedTuple):
    """An ONNX value type: ``kind`` "tensor", "sequence" (of tensors) or "optional";
    ``dtype`` the (element) tensor dtype; ``shape`` the tensor's or each element's dims
    (ints, names, None for unknown; ``shape`` None: unknown rank); ``elem`` an optional's
    element type."""

    kind: str
    dtype: str
    shape: object = None
    elem: object = None


def type_desc(type_proto, what):
    """The TypeDesc of an ONNX ``TypeProto`` (OnnxImportError naming ``what`` for the
    kinds the importer does not convert)."""
    which = type_proto.WhichOneof("value")
    if which == "tensor_type":
        tensor = type_proto.tensor_type
        shape = None
        if tensor.HasField("shape"):
            shape = [int(d.dim_value) if d.HasField("dim_value") else (d.dim_param or None)
                     for d in tensor.shape.dim]
        return TypeDesc("tensor", onnx_dtype(tensor.elem_type, what), shape)
    if which == "sequence_type":
        elem = type_desc(type_proto.sequence_type.elem_type, what)
        if elem.kind != "tensor":
            raise OnnxImportError(f"{what}: a sequence of {elem.kind}s is not supported; "
                                  "expected a sequence of tensors")
        return TypeDesc("sequence", elem.dtype, elem.shape)
    if which == "optional_type":
        elem = type_desc(type_proto.optional_type.elem_type, what)
        if elem.kind == "optional":
            raise OnnxImportError(f"{what}: an optional of an optional is not a valid type")
        return TypeDesc("optional", elem.dtype, elem.shape, elem)
    raise OnnxImportError(f"{what}: {which or 'untyped'} values are not supported; expected "
                          "a tensor, a sequence of tensors or an optional")


class Sequence:
    """An ONNX sequence of tensors of ``dtype``: ``items`` (tensor values) when its
    length is known at import, else ``expr`` (a Relax value holding the runtime tuple);
    ``shape`` is what is known of every element's dims (None: unknown rank)."""

    def __init__(self, dtype, items=None, expr=None, shape=None):
        if (items is None) == (expr is None):
            raise ValueError("a Sequence has items or an expr, not both")
        self.dtype, self.items, self.expr, self.shape = dtype, items, expr, shape

    @property
    def static(self):
        return self.items is not None

    def __repr__(self):
        body = f"{len(self.items)} items" if self.static else "dynamic"
        return f"Sequence({self.dtype}, {body})"


class Optional:
    """An ONNX optional of type ``elem`` (a TypeDesc): it holds ``value`` when that is
    given, is empty when neither ``value`` nor ``expr`` is, and is ``expr`` (None or the
    value at run time) otherwise."""

    def __init__(self, elem, value=None, expr=None):
        if value is not None and expr is not None:
            raise ValueError("an Optional has a value or an expr, not both")
        self.elem, self.value, self.expr = elem, value, expr

    @property
    def empty(self):
        return self.value is None and self.expr is None

    def __repr__(self):
        state = "empty" if self.empty else "dynamic" if self.expr is not None else "present"
        return f"Optional({self.elem.kind} of {self.elem.dtype}, {state})"


def items_shape(ctx, items):
    """What the tensor values ``items`` agree on of their dims (None where they differ;
    None for all when their ranks differ)."""
    shapes = [desc_of(ctx, v).shape for v in items]
    if not shapes or any(s is None for s in shapes) or len({len(s) for s in shapes}) != 1:
        return None
    return [s[0] if all(x == s[0] for x in s) else None for s in zip(*shapes)]


def desc_of(ctx, value):
    """The TypeDesc of an importer value."""
    if isinstance(value, Sequence):
        shape = items_shape(ctx, value.items) if value.static else value.shape
        return TypeDesc("sequence", value.dtype, shape)
    if isinstance(value, Optional):
        return TypeDesc("optional", value.elem.dtype, value.elem.shape, value.elem)
    return TypeDesc("tensor", ctx.dtype(value), _known_dims(ctx, value))


def _known_dims(ctx, value):
    sinfo = None if isinstance(value, np.ndarray) else ctx.sinfo(value)
    if sinfo is not None and sinfo.shape_values is None:
        return None if sinfo.ndim < 0 else [None] * sinfo.ndim
    return [d if isinstance(d, int) else None for d in ctx.shape(value)]


def relax_expr(ctx, value):
    """An importer value as a Relax expression: a static sequence as a tuple, an empty
    optional as ``R.null_value()``."""
    if isinstance(value, Sequence):
        if value.static:
            return Tuple([ctx.tensor(v) for v in value.items])
        return value.expr
    if isinstance(value, Optional):
        if value.value is not None:
            return relax_expr(ctx, value.value)
        return null_value() if value.expr is None else value.expr
    if isinstance(value, StringTensor):
        return string_expr(value)
    return ctx.tensor(value)


def is_constant(value):
    """Whether the value is known at import (a subgraph shares it instead of taking it as
    a parameter)."""
    if isinstance(value, np.ndarray):
        return True
    if isinstance(value, Sequence):
        return value.static and all(isinstance(v, np.ndarray) for v in value.items)
    if isinstance(value, Optional):
        return value.empty or (value.value is not None and is_constant(value.value))
    return isinstance(value, StringTensor) and value.array is not None


def element_sinfo(desc, hint=""):
    """The struct info of a tensor of ``desc``'s dtype and rank, new symbolic variables
    for its dims other than constants (an unknown rank: any rank)."""
    if desc.shape is None:
        return TensorStructInfo(ndim=-1, dtype=desc.dtype)
    dims = [d if isinstance(d, int) else TirVar(f"{hint}d{k}", "int64")
            for k, d in enumerate(desc.shape)]
    return TensorStructInfo(dims, desc.dtype)


def with_dims(ctx, expr, desc, hint=""):
    """The tensor ``expr`` cast (``match_cast``) to ``desc``'s shape where its own shape is
    unknown, so the converters that follow see its dimensions."""
    sinfo = getattr(expr, "struct_info_", None)
    if isinstance(sinfo, TensorStructInfo):
        if sinfo.shape_values is not None or sinfo.ndim < 0:
            return expr
        if desc.shape is None or len(desc.shape) != sinfo.ndim:
            desc = desc._replace(shape=[None] * sinfo.ndim)
    return ctx.bb.match_cast(expr, element_sinfo(desc, hint))


def from_expr(ctx, desc, expr, hint=""):
    """The importer value of type ``desc`` that the Relax value ``expr`` holds."""
    sinfo = getattr(expr, "struct_info_", None)
    if desc.kind == "tensor":
        return with_dims(ctx, expr, desc, hint)
    if desc.kind == "sequence":
        if isinstance(sinfo, TupleStructInfo):
            elem = TypeDesc("tensor", desc.dtype, desc.shape)
            return Sequence(desc.dtype, items=[
                with_dims(ctx, ctx.emit(TupleGetItem(expr, k)), elem, f"{hint}{k}_")
                for k in range(len(sinfo.fields))])
        return Sequence(desc.dtype, expr=expr, shape=desc.shape)
    if isinstance(sinfo, (TensorStructInfo, TupleStructInfo)):
        return Optional(desc.elem, value=from_expr(ctx, desc.elem, expr, hint))
    return Optional(desc.elem, expr=expr)


def rebind(ctx, value, var):
    """A captured sequence, optional or string tensor ``value`` as the parameter ``var`` of
    a subgraph's function (its length or presence then known at run time only)."""
    if isinstance(value, Sequence):
        return Sequence(value.dtype, expr=var, shape=desc_of(ctx, value).shape)
    if isinstance(value, Optional):
        return Optional(value.elem, expr=var)
    if isinstance(value, StringTensor):
        return StringTensor(expr=var, shape=value.shape)
    return var


def tensor_value(proto):
    """A TensorProto as a numpy array (its rvm dtype); a tensor of strings as a
    ``strings.StringTensor``."""
    from onnx import numpy_helper  # the proto came from an onnx model

    if proto.data_type == STRING:
        return string_value(proto)
    onnx_dtype(proto.data_type, f"tensor '{proto.name}'")
    return numpy_helper.to_array(proto).copy()
