"""ONNX sequence and optional operators (``values.Sequence``, ``values.Optional``).

On a sequence whose length is known at import, with constant positions, they are list
operations at import (the tensors stay Relax values or constants); otherwise they call
the ``vm.builtin.sequence_*`` builtins on the runtime tuple. Optional, OptionalHasElement
and OptionalGetElement decide at import when presence is known, and call
``vm.builtin.optional_*`` otherwise.
"""
import numpy as np

from rvm.relax.frontend.onnx import runtime_shape
from rvm.relax.frontend.onnx.common import OnnxImportError, onnx_dtype
from rvm.relax.frontend.onnx.registry import converter, optional_const
from rvm.relax.frontend.onnx.runtime_shape import int64_tensor, is_run_time
from rvm.relax.frontend.onnx.values import (
    Optional, Sequence, TypeDesc, desc_of, from_expr, items_shape, relax_expr, type_desc,
)
from rvm.relax.expr import PrimValue, TupleGetItem
from rvm.relax.op import join, manipulate
from rvm.relax.op.base import call_pure_packed
from rvm.relax.struct_info import ObjectStructInfo, TensorStructInfo

_FLOAT = 1  # TensorProto.FLOAT, SequenceEmpty's default dtype


def _sequence(value, what):
    if not isinstance(value, Sequence):
        raise OnnxImportError(f"{what} must be a sequence, got {_kind(value)}")
    return value


def _kind(value):
    if isinstance(value, Optional):
        return "an optional"
    return "None" if value is None else "a tensor"


def _tensor_dtype(ctx, value, what):
    if isinstance(value, (Sequence, Optional)) or value is None:
        raise OnnxImportError(f"{what} must be a tensor, got {_kind(value)}")
    return ctx.dtype(value)


def _const_position(ctx, value):
    """A constant position as an int, None when it is computed at run time."""
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        if value.size != 1 or value.dtype.kind not in "iu":
            raise OnnxImportError(f"a position must be one integer, got {value.dtype} of "
                                  f"shape {list(value.shape)}")
        return int(value.reshape(-1)[0])
    return None


def _index(position, size, insert=False):
    high = size if insert else size - 1
    if not -size <= position <= high:
        raise OnnxImportError(f"position {position} is out of range for a sequence of {size} "
                              f"tensors (expected {-size} to {high})")
    return position + size if position < 0 else position


def _merged_shape(a, b):
    if a is None or b is None or len(a) != len(b):
        return None
    return [x if x == y else None for x, y in zip(a, b)]


def _check_dtype(seq, dtype, who):
    if seq.dtype != dtype:
        raise OnnxImportError(f"{who}: the sequence holds {seq.dtype} tensors, got {dtype}")


def _call(ctx, name, args, sinfo, hint):
    return ctx.emit(call_pure_packed(name, *args, sinfo_args=sinfo), hint)


def _dynamic(ctx, seq):
    """The Relax value of ``seq`` (a tuple for a static one)."""
    return ctx.emit(relax_expr(ctx, seq)) if seq.static else seq.expr


@converter("SequenceConstruct")
def _sequence_construct(ctx, inputs, attrs):
    if not inputs:
        raise OnnxImportError("SequenceConstruct needs at least one tensor")
    dtypes = {_tensor_dtype(ctx, v, "an input of SequenceConstruct") for v in inputs}
    if len(dtypes) != 1:
        raise OnnxImportError(f"the tensors have dtypes {sorted(dtypes)}; expected one dtype")
    return Sequence(dtypes.pop(), items=list(inputs))


@converter("SequenceEmpty")
def _sequence_empty(ctx, inputs, attrs):
    return Sequence(onnx_dtype(attrs.get("dtype", _FLOAT), "SequenceEmpty's dtype"), items=[])


@converter("SequenceInsert")
def _sequence_insert(ctx, inputs, attrs):
    seq = _sequence(inputs[0], "SequenceInsert's input")
    tensor = inputs[1]
    _check_dtype(seq, _tensor_dtype(ctx, tensor, "SequenceInsert's tensor"), "SequenceInsert")
    given = inputs[2] if len(inputs) > 2 else None
    position = _const_position(ctx, given)
    if seq.static and (given is None or position is not None):
        items = list(seq.items)
        items.insert(len(items) if given is None else _index(position, len(items), True),
                     tensor)
        return Sequence(seq.dtype, items=items)
    args = [_dynamic(ctx, seq), ctx.tensor(tensor)] + ([] if given is None else
                                                        [ctx.tensor(given)])
    added = desc_of(ctx, tensor).shape
    shape = added if seq.static and not seq.items else \
        _merged_shape(desc_of(ctx, seq).shape, added)
    expr = _call(ctx, "vm.builtin.sequence_insert", args, ObjectStructInfo(), "seq")
    return Sequence(seq.dtype, expr=expr, shape=shape)


@converter("SequenceErase")
def _sequence_erase(ctx, inputs, attrs):
    seq = _sequence(inputs[0], "SequenceErase's input")
    given = inputs[1] if len(inputs) > 1 else None
    position = _const_position(ctx, given)
    if seq.static and (given is None or position is not None):
        if not seq.items:
            raise OnnxImportError("SequenceErase on an empty sequence")
        index = len(seq.items) - 1 if given is None else _index(position, len(seq.items))
        return Sequence(seq.dtype, items=seq.items[:index] + seq.items[index + 1:])
    args = [_dynamic(ctx, seq)] + ([] if given is None else [ctx.tensor(given)])
    expr = _call(ctx, "vm.builtin.sequence_erase", args, ObjectStructInfo(), "seq")
    shape = items_shape(ctx, seq.items) if seq.static else seq.shape
    return Sequence(seq.dtype, expr=expr, shape=shape)


@converter("SequenceAt")
def _sequence_at(ctx, inputs, attrs):
    seq = _sequence(inputs[0], "SequenceAt's input")
    position = _const_position(ctx, inputs[1])
    if seq.static and position is not None:
        return seq.items[_index(position, len(seq.items))]
    shape = items_shape(ctx, seq.items) if seq.static else seq.shape
    desc = TypeDesc("tensor", seq.dtype, shape)
    ndim = -1 if shape is None else len(shape)
    expr = _call(ctx, "vm.builtin.sequence_at", [_dynamic(ctx, seq), ctx.tensor(inputs[1])],
                 TensorStructInfo(ndim=ndim, dtype=seq.dtype), "at")
    return from_expr(ctx, desc, expr, "at")


@converter("SequenceLength")
def _sequence_length(ctx, inputs, attrs):
    seq = _sequence(inputs[0], "SequenceLength's input")
    if seq.static:
        return np.array(len(seq.items), "int64")
    return _call(ctx, "vm.builtin.sequence_length", [seq.expr],
                 TensorStructInfo((), "int64"), "length")


@converter("ConcatFromSequence")
def _concat_from_sequence(ctx, inputs, attrs):
    seq = _sequence(inputs[0], "ConcatFromSequence's input")
    if "axis" not in attrs:
        raise OnnxImportError("ConcatFromSequence needs its 'axis' attribute")
    axis, new_axis = int(attrs["axis"]), bool(attrs.get("new_axis", 0))
    if seq.static:
        if not seq.items:
            raise OnnxImportError("ConcatFromSequence on an empty sequence")
        rank = len(ctx.shape(seq.items[0])) + new_axis
        if not -rank <= axis < rank:
            raise OnnxImportError(f"axis {axis} is out of range for rank {rank}")
        axis = axis + rank if axis < 0 else axis
        if all(isinstance(v, np.ndarray) for v in seq.items):
            return (np.stack if new_axis else np.concatenate)(seq.items, axis)
        items = [ctx.tensor(v) for v in seq.items]
        if new_axis:
            items = [ctx.emit(manipulate.expand_dims(v, [axis])) for v in items]
        return ctx.emit(join.concat(items, axis=axis))
    ndim = -1 if seq.shape is None else len(seq.shape) + new_axis
    expr = _call(ctx, "vm.builtin.sequence_concat",
                 [seq.expr, PrimValue(axis), PrimValue(int(new_axis))],
                 TensorStructInfo(ndim=ndim, dtype=seq.dtype), "concat")
    return from_expr(ctx, TypeDesc("tensor", seq.dtype, None), expr, "concat")


@converter("SplitToSequence")
def _split_to_sequence(ctx, inputs, attrs):
    data = inputs[0]
    dtype = _tensor_dtype(ctx, data, "SplitToSequence's input")
    dims = ctx.shape(data)
    axis = int(attrs.get("axis", 0))
    if not -len(dims) <= axis < len(dims):
        raise OnnxImportError(f"axis {axis} is out of range for rank {len(dims)}")
    axis %= len(dims)
    length = dims[axis]
    if not isinstance(length, int):
        raise OnnxImportError(f"SplitToSequence needs a static length on axis {axis}, got "
                              f"{length}")
    split = inputs[1] if len(inputs) > 1 else None
    if is_run_time(split) and len(ctx.shape(split)) == 1:  # the sizes of a static count
        return Sequence(dtype, items=runtime_shape.split(ctx, data, int64_tensor(ctx, split),
                                                         axis))
    split = optional_const(ctx, split, "SplitToSequence's split")
    keep = True
    if split is None:
        sizes = [1] * length
        keep = bool(attrs.get("keepdims", 1))
    elif split.ndim == 0:
        step = int(split)
        if step <= 0:
            raise OnnxImportError(f"the split size must be positive, got {step}")
        sizes = [min(step, length - k) for k in range(0, length, step)]
    else:
        sizes = [int(s) for s in split.reshape(-1)]
        if sum(sizes) != length or any(s < 0 for s in sizes):
            raise OnnxImportError(f"the split sizes {sizes} do not sum to the axis length "
                                  f"{length}")
    cuts = [int(c) for c in np.cumsum(sizes)[:-1]]
    if isinstance(data, np.ndarray):
        parts = np.split(data, cuts, axis=axis)
        items = parts if keep else [np.squeeze(p, axis) for p in parts]
        return Sequence(dtype, items=items)
    out = ctx.emit(join.split(ctx.tensor(data), cuts, axis=axis)) if len(sizes) > 1 else None
    items = [ctx.tensor(data)] if out is None else \
        [ctx.emit(TupleGetItem(out, k)) for k in range(len(sizes))]
    if not keep:
        items = [ctx.emit(manipulate.squeeze(v, [axis])) for v in items]
    return Sequence(dtype, items=items)


# -- optionals ----------------------------------------------------------------------------
@converter("Optional")
def _optional(ctx, inputs, attrs):
    value = inputs[0] if inputs else None
    if value is None:
        if "type" not in attrs:
            raise OnnxImportError("an Optional without input needs its 'type' attribute")
        return Optional(type_desc(attrs["type"], "Optional's type"))
    if isinstance(value, Optional):
        raise OnnxImportError("Optional's input is an optional; expected a tensor or sequence")
    return Optional(desc_of(ctx, value), value=value)


@converter("OptionalHasElement")
def _optional_has_element(ctx, inputs, attrs):
    value = inputs[0] if inputs else None
    if value is None or isinstance(value, Optional) and value.empty:
        return np.array(False)
    if not isinstance(value, Optional) or value.value is not None:
        return np.array(True)
    return _call(ctx, "vm.builtin.optional_has_element", [value.expr],
                 TensorStructInfo((), "bool"), "has_element")


@converter("OptionalGetElement")
def _optional_get_element(ctx, inputs, attrs):
    value = inputs[0] if inputs else None
    if value is None:
        raise OnnxImportError("OptionalGetElement needs an input")
    if not isinstance(value, Optional):
        return value
    if value.value is not None:
        return value.value
    if value.empty:
        raise OnnxImportError("OptionalGetElement of an optional that is always empty")
    sinfo = ObjectStructInfo() if value.elem.kind == "sequence" else TensorStructInfo(
        ndim=-1 if value.elem.shape is None else len(value.elem.shape), dtype=value.elem.dtype)
    expr = _call(ctx, "vm.builtin.optional_get_element", [value.expr], sinfo, "element")
    return from_expr(ctx, value.elem, expr, "element")


# -- SequenceMap --------------------------------------------------------------------------
@converter("SequenceMap")
def _sequence_map(ctx, inputs, attrs):
    """``SequenceMap`` as the Loop of its ONNX function body: for each position of the
    first sequence, the body runs on the elements of the sequence inputs at that position
    and the other inputs as they are, and its outputs are appended to the output
    sequences."""
    from onnx import TensorProto, helper

    node, body = ctx.node, attrs["body"]
    _sequence(inputs[0], "SequenceMap's first input")
    if len(body.input) != len(inputs):
        raise OnnxImportError(f"the body takes {len(body.input)} inputs; the node gives "
                              f"{len(inputs)}")
    if len(body.output) != len(node.output):
        raise OnnxImportError(f"the body gives {len(body.output)} outputs; the node has "
                              f"{len(node.output)}")
    prefix = f"{node.output[0]}__map_"
    iteration, cond_in, cond_out = prefix + "i", prefix + "cond_in", prefix + "cond_out"
    nodes = [helper.make_node("SequenceLength", [node.input[0]], [prefix + "length"])]
    steps = [helper.make_node("Identity", [cond_in], [cond_out])]
    for name, value, value_info in zip(node.input, inputs, body.input):
        op = "SequenceAt" if isinstance(value, Sequence) else "Identity"
        steps.append(helper.make_node(op, [name] + ([iteration] if op == "SequenceAt" else []),
                                      [value_info.name]))
    steps += list(body.node)
    loop_inputs, loop_outputs = [], []
    for k, out in enumerate(body.output):
        elem_type = out.type.tensor_type.elem_type
        if not out.type.HasField("tensor_type") or not elem_type:
            raise OnnxImportError(f"output {k} of the body must be a typed tensor")
        empty, acc, acc_out = prefix + f"empty{k}", prefix + f"acc{k}", prefix + f"acc{k}_out"
        nodes.append(helper.make_node("SequenceEmpty", [], [empty], dtype=elem_type))
        steps.append(helper.make_node("SequenceInsert", [acc, out.name], [acc_out]))
        loop_inputs.append(helper.make_tensor_sequence_value_info(acc, elem_type, None))
        loop_outputs.append(helper.make_tensor_sequence_value_info(acc_out, elem_type, None))
    graph = helper.make_graph(
        steps, prefix + "body",
        [helper.make_tensor_value_info(iteration, TensorProto.INT64, []),
         helper.make_tensor_value_info(cond_in, TensorProto.BOOL, [])] + loop_inputs,
        [helper.make_tensor_value_info(cond_out, TensorProto.BOOL, [])] + loop_outputs,
        list(body.initializer))
    nodes.append(helper.make_node("Loop", [prefix + "length", ""] +
                                  [prefix + f"empty{k}" for k in range(len(body.output))],
                                  [prefix + f"out{k}" for k in range(len(body.output))],
                                  body=graph))
    ctx.convert_nodes(nodes)
    ctx.node = node
    return [ctx.env[prefix + f"out{k}"] for k in range(len(body.output))]
