"""ONNX operators that move data or compute shapes: Reshape, Transpose, Concat, Split,
Slice, Gather, Shape, Cast, Expand, Range ...

Operands that decide an output's shape (Reshape's shape, Slice's starts, axes given
as inputs) fold when known at import: each operator has a fold rule so the shape
arithmetic of exported models (Shape -> Gather -> Concat -> Reshape) runs at import,
with symbolic dimensions kept as ``tir`` expressions. Reshape's and Expand's shape,
ConstantOfShape's input, Range's bounds, Squeeze/Unsqueeze's axes, Slice's starts, ends,
axes and steps and Split's sizes may also be known only at run time (``runtime_shape``).
"""
import numpy as np

from rvm.relax.frontend.onnx.common import (
    ONNX_DTYPES, OnnxImportError, decide_dims, static_array,
)
from rvm.relax.frontend.onnx.registry import attr_ints, converter, fold, optional_const
from rvm.relax.frontend.onnx import runtime_shape
from rvm.relax.frontend.onnx.runtime_shape import (
    broadcast_target, int64_tensor, is_run_time, reshape_checked, resolve_reshape, shape_vars,
    static_length,
)
from rvm.relax.frontend.onnx.values import tensor_value
from rvm.ir.expr import PrimExpr
from rvm.relax.expr import TupleGetItem
from rvm.relax.op import binary, create, index, join, manipulate, search, unary
from rvm.relax.struct_info import TensorStructInfo
from rvm.runtime.data_type import DataType


def normalize_axis(axis, ndim):
    """``axis`` (maybe negative) as a non-negative axis of a rank-``ndim`` value."""
    axis = int(axis)
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"axis {axis} is out of range for rank {ndim}")
    return axis % ndim if ndim else 0


def shape_list(ctx, value, what):
    """A constant 1-D shape operand as a list of ints and ``tir`` expressions."""
    values = ctx.constant(value, what).reshape(-1)
    return [v if isinstance(v, PrimExpr) else int(v) for v in values]


def _is_one(dim):
    return not isinstance(dim, PrimExpr) and dim == 1


def broadcast_dims(lhs, rhs):
    """The numpy broadcast of two shapes (symbolic dimensions taken as equal or 1)."""
    lhs, rhs = list(lhs), list(rhs)
    rank = max(len(lhs), len(rhs))
    lhs, rhs = [1] * (rank - len(lhs)) + lhs, [1] * (rank - len(rhs)) + rhs
    out = []
    for a, b in zip(lhs, rhs):
        if _is_one(a):
            out.append(b)
        elif _is_one(b) or not isinstance(a, PrimExpr) and not isinstance(b, PrimExpr):
            if not _is_one(b) and a != b:
                raise ValueError(f"shapes {lhs} and {rhs} do not broadcast")
            out.append(a)
        else:
            out.append(a if isinstance(b, PrimExpr) else b)
    return out


# -- shapes -----------------------------------------------------------------------------------
@converter("Shape")
def _shape(ctx, inputs, attrs):
    dims = ctx.shape(inputs[0])
    dims = dims[slice(attrs.get("start", 0), attrs.get("end"))]
    if all(isinstance(d, int) for d in dims):
        return np.array(dims, "int64")
    return np.array(dims, dtype=object)


fold("Shape")(_shape)


@converter("Size")
def _size(ctx, inputs, attrs):
    total = 1
    for d in ctx.shape(inputs[0]):
        total = total * d
    return np.array(total, "int64" if isinstance(total, int) else object)


fold("Size")(_size)


@converter("Constant")
def _constant(ctx, inputs, attrs):
    if "value" in attrs:
        return tensor_value(attrs["value"])
    for name, dtype in (("value_float", "float32"), ("value_floats", "float32"),
                        ("value_int", "int64"), ("value_ints", "int64")):
        if name in attrs:
            return np.array(attrs[name], dtype)
    raise ValueError(f"Constant: attributes {sorted(attrs)} are not supported; expected "
                     "value, value_float(s) or value_int(s)")


@converter("ConstantOfShape")
def _constant_of_shape(ctx, inputs, attrs):
    if is_run_time(inputs[0]):
        length = static_length(ctx, inputs[0], "ConstantOfShape's input")
        shape = shape_vars(ctx, int64_tensor(ctx, inputs[0]), [None] * length, "fill")
    else:
        shape = shape_list(ctx, inputs[0], "ConstantOfShape's shape")
    value = tensor_value(attrs["value"]).reshape(-1) if "value" in attrs else \
        np.zeros(1, "float32")
    return ctx.emit(create.full(shape, ctx.tensor(value.reshape(())), str(value.dtype)))


@fold("ConstantOfShape")
def _fold_constant_of_shape(ctx, inputs, attrs):
    shape = shape_list(ctx, inputs[0], "ConstantOfShape's shape")
    if not all(isinstance(d, int) for d in shape) or int(np.prod(shape)) > 64:
        return _constant_of_shape(ctx, inputs, attrs)
    value = tensor_value(attrs["value"]).reshape(-1) if "value" in attrs else \
        np.zeros(1, "float32")
    return np.full(shape, value[0], value.dtype)


@converter("Reshape")
def _reshape(ctx, inputs, attrs):
    data, shape = inputs
    dims = ctx.shape(data)
    if is_run_time(shape):
        static_length(ctx, shape, "Reshape's shape")
        target = resolve_reshape(ctx, dims, int64_tensor(ctx, shape), attrs.get("allowzero", 0))
        return reshape_checked(ctx, data, target, "reshape")
    target = shape_list(ctx, shape, "Reshape's shape")
    if not attrs.get("allowzero", 0):
        target = [dims[k] if not isinstance(d, PrimExpr) and d == 0 else d
                  for k, d in enumerate(target)]
    if isinstance(data, np.ndarray):
        return data.reshape([int(d) for d in target])
    if 0 in dims and all(isinstance(d, int) for d in dims + target):
        # no elements: the result is the empty tensor of the new shape (-1 resolved)
        empty = np.zeros(dims, ctx.dtype(data)).reshape(target)
        return ctx.emit(create.zeros(list(empty.shape), ctx.dtype(data)))
    return ctx.emit(manipulate.reshape(ctx.tensor(data), target))


fold("Reshape")(_reshape)


@converter("Flatten")
def _flatten(ctx, inputs, attrs):
    dims = ctx.shape(inputs[0])
    axis = attrs.get("axis", 1)
    axis = axis + len(dims) if axis < 0 else axis
    outer, inner = 1, 1
    for d in dims[:axis]:
        outer = outer * d
    for d in dims[axis:]:
        inner = inner * d
    return ctx.emit(manipulate.reshape(ctx.tensor(inputs[0]), [outer, inner]))


@converter("Transpose")
def _transpose(ctx, inputs, attrs):
    perm = attr_ints(attrs, "perm")
    if isinstance(inputs[0], np.ndarray):
        return np.transpose(inputs[0], perm)
    return ctx.emit(manipulate.permute_dims(ctx.tensor(inputs[0]), perm))


fold("Transpose")(_transpose)


def _axes_operand(ctx, inputs, attrs, position):
    if len(inputs) > position and inputs[position] is not None:
        return [int(a) for a in ctx.constant(inputs[position], "axes").reshape(-1)]
    return attr_ints(attrs, "axes")


@converter("Squeeze")
def _squeeze(ctx, inputs, attrs):
    data = inputs[0]
    dims = ctx.shape(data)
    if len(inputs) > 1 and is_run_time(inputs[1]):
        static_length(ctx, inputs[1], "Squeeze's axes")
        return runtime_shape.squeeze(ctx, data, int64_tensor(ctx, inputs[1]))
    axes = _axes_operand(ctx, inputs, attrs, 1)
    if axes is None:
        axes = [k for k, d in enumerate(dims) if _is_one(d)]
    axes = sorted(normalize_axis(a, len(dims)) for a in axes)
    if isinstance(data, np.ndarray):
        return np.squeeze(data, tuple(axes)) if axes else data
    return ctx.emit(manipulate.squeeze(ctx.tensor(data), axes))


fold("Squeeze")(_squeeze)


@converter("Unsqueeze")
def _unsqueeze(ctx, inputs, attrs):
    data = inputs[0]
    if len(inputs) > 1 and is_run_time(inputs[1]):
        static_length(ctx, inputs[1], "Unsqueeze's axes")
        return runtime_shape.unsqueeze(ctx, data, int64_tensor(ctx, inputs[1]))
    axes = _axes_operand(ctx, inputs, attrs, 1)
    rank = len(ctx.shape(data)) + len(axes)
    axes = sorted(normalize_axis(a, rank) for a in axes)
    if isinstance(data, np.ndarray):
        return np.expand_dims(data, tuple(axes))
    return ctx.emit(manipulate.expand_dims(ctx.tensor(data), axes))


fold("Unsqueeze")(_unsqueeze)


@converter("Concat")
def _concat(ctx, inputs, attrs):
    values = [v for v in inputs if v is not None]
    axis = normalize_axis(attrs["axis"], len(ctx.shape(values[0])))
    if all(isinstance(v, np.ndarray) for v in values):
        return np.concatenate(values, axis=axis)
    return ctx.emit(join.concat([ctx.tensor(v) for v in values], axis=axis))


fold("Concat")(_concat)


@converter("Split")
def _split(ctx, inputs, attrs):
    data = inputs[0]
    dims = ctx.shape(data)
    axis = normalize_axis(attrs.get("axis", 0), len(dims))
    parts = len(ctx.node.output)
    if len(inputs) > 1 and is_run_time(inputs[1]):
        return runtime_shape.split(ctx, data, int64_tensor(ctx, inputs[1]), axis)
    sizes = optional_const(ctx, inputs[1] if len(inputs) > 1 else None, "Split's split")
    if sizes is None and "split" in attrs:
        sizes = attrs["split"]
    length = dims[axis]
    if sizes is None:
        count = attrs.get("num_outputs", parts)
        if isinstance(length, PrimExpr):
            if count != 1:
                raise ValueError("splitting a symbolic axis needs explicit sizes")
            sizes = [length]
        else:
            step = -(-length // count)
            sizes = [min(step, length - k * step) for k in range(count)]
    cuts = list(np.cumsum([int(s) for s in sizes])[:-1])
    if isinstance(data, np.ndarray):
        return np.split(data, cuts, axis=axis)
    out = ctx.emit(join.split(ctx.tensor(data), [int(c) for c in cuts], axis=axis))
    return [ctx.emit(TupleGetItem(out, k)) for k in range(len(sizes))]


fold("Split")(_split)


def _length(ctx, value, what):
    shape = ctx.shape(value)
    if len(shape) != 1 or not isinstance(shape[0], int):
        raise ValueError(f"{what} must be a 1-D tensor of static length, got shape {shape}")
    return shape[0]


def _slice_bounds(ctx, value, dims, steps, what):
    """Slice's starts or ends as ints, or, when known only at run time (a graph input or
    computed), as symbolic values read from the tensor (``vm.builtin.tensor_to_shape``),
    negative ones counted from the end of their axis, then clamped into it as onnx does
    (``[0, dim]`` for a positive step, ``[-1, dim - 1]`` for a negative one), so a bound
    is never further out than the slice's own clamping assumes."""
    if not is_run_time(value):
        limit = 1 << 62  # symbolic bounds (dimensions) are clamped by strided_slice
        return [v if isinstance(v, PrimExpr) else max(min(int(v), limit), -limit)
                for v in ctx.constant(value, f"Slice's {what}s").reshape(-1)]
    bounds = int64_tensor(ctx, value)
    size = runtime_shape.dims_tensor(ctx, dims)
    zero = ctx.tensor(np.array(0, "int64"))
    bounds = ctx.emit(search.where(binary.less(bounds, zero), binary.add(bounds, size), bounds))
    backward = [s < 0 for s in steps]
    low = ctx.tensor(np.array([-1 if b else 0 for b in backward], "int64"))
    high = ctx.emit(binary.subtract(size, ctx.tensor(np.array(backward, "int64"))))
    bounds = ctx.emit(binary.maximum(binary.minimum(bounds, high), low))
    return shape_vars(ctx, bounds, [None] * len(dims), f"slice_{what}")


@converter("Slice")
def _slice(ctx, inputs, attrs):
    data = inputs[0]
    dims = ctx.shape(data)
    count = _length(ctx, inputs[1], "Slice's starts")
    given = list(inputs[1:5]) + [None] * (5 - len(inputs))
    if any(is_run_time(v) for v in given[2:]):
        return _slice_at_run_time(ctx, data, given, count)
    axes = optional_const(ctx, inputs[3] if len(inputs) > 3 else None, "Slice's axes")
    axes = list(range(count)) if axes is None else [int(a) for a in axes.reshape(-1)]
    steps = optional_const(ctx, inputs[4] if len(inputs) > 4 else None, "Slice's steps")
    steps = [1] * count if steps is None else [int(s) for s in steps.reshape(-1)]
    axes = [normalize_axis(a, len(dims)) for a in axes]
    starts = _slice_bounds(ctx, inputs[1], [dims[a] for a in axes], steps, "start")
    ends = _slice_bounds(ctx, inputs[2], [dims[a] for a in axes], steps, "end")
    if isinstance(data, np.ndarray) and not any(isinstance(v, PrimExpr) for v in starts + ends):
        index_ = [slice(None)] * len(dims)
        for a, s, e, st in zip(axes, starts, ends, steps):
            index_[a] = slice(s, e, st)
        return data[tuple(index_)]
    out = ctx.emit(index.strided_slice(ctx.tensor(data), axes, starts, ends, steps))
    return _within_axes(ctx, out, dims, zip(axes, starts, ends, steps))


def _slice_at_run_time(ctx, data, given, count):
    """Slice with run-time axes or steps: its operands as 1-D int64 tensors of ``count``
    elements (omitted axes are the first ``count``, omitted steps 1)."""
    what = ("starts", "ends", "axes", "steps")
    defaults = (None, None, np.arange(count, dtype="int64"), np.ones(count, "int64"))
    operands = []
    for value, name, default in zip(given, what, defaults):
        value = default if value is None else value
        if _length(ctx, value, f"Slice's {name}") != count:
            raise ValueError(f"Slice's {name} must hold {count} values (as many as its "
                             f"starts), got shape {ctx.shape(value)}")
        operands.append(int64_tensor(ctx, value))
    return runtime_shape.strided_slice(ctx, data, *operands)


def _within_axes(ctx, out, dims, bounds):
    """A slice of a static axis with a symbolic end (a position table cut to the sequence
    length: ``table[:seq]``) has the extent ``min(seq, 64)``, which no other dimension
    equals; the importer takes it to be ``seq`` (``end - start``) and checks that at run
    time (a ``match_cast``, refusing an end past the axis), so the result broadcasts with
    the tensors whose dimension is ``seq``."""
    want, taken = list(ctx.shape(out)), False
    for axis, start, end, step in bounds:
        symbolic = isinstance(start, PrimExpr) or isinstance(end, PrimExpr)
        if not symbolic or step != 1 or not isinstance(dims[axis], int) or \
                not isinstance(start, PrimExpr) and start < 0:
            continue
        extent = end - start
        if decide_dims(extent >= 0) and decide_dims(extent == want[axis]) is not True:
            want[axis], taken = extent, True
    if not taken:
        return out
    return ctx.bb.match_cast(out, TensorStructInfo(want, ctx.dtype(out)),
                             name_hint="slice_end_within_axis")


fold("Slice")(_slice)


@converter("Gather")
def _gather(ctx, inputs, attrs):
    data, indices = inputs
    axis = normalize_axis(attrs.get("axis", 0), len(ctx.shape(data)))
    if isinstance(data, np.ndarray) and isinstance(indices, np.ndarray):
        return np.take(data, indices.astype("int64"), axis=axis)
    return ctx.emit(index.take(ctx.tensor(data), ctx.tensor(indices), axis=axis))


fold("Gather")(_gather)


@converter("GatherElements")
def _gather_elements(ctx, inputs, attrs):
    data, indices = ctx.tensor(inputs[0]), ctx.tensor(inputs[1])
    dims = ctx.shape(data)
    idx_dims = ctx.shape(indices)
    if not all(isinstance(d, int) for d in dims + idx_dims):
        raise ValueError("GatherElements needs static shapes")
    axis = normalize_axis(attrs.get("axis", 0), len(dims))
    dtype = ctx.dtype(indices)
    # negative indices count from the end of the axis
    negative = ctx.emit(binary.less(indices, ctx.tensor(np.array(0, dtype))))
    indices = ctx.emit(search.where(negative, ctx.emit(binary.add(
        indices, ctx.tensor(np.array(dims[axis], dtype)))), indices))
    indices = ctx.emit(unary.astype(indices, "int64"))
    strides = np.cumprod([1] + dims[::-1][:-1])[::-1]
    grid = np.indices(idx_dims, dtype="int64")
    flat = sum(grid[k] * strides[k] for k in range(len(dims)) if k != axis)
    offset = ctx.emit(binary.add(ctx.emit(binary.multiply(
        indices, ctx.tensor(np.array(strides[axis], "int64")))), ctx.tensor(
            np.asarray(flat, "int64"))))
    flat_data = ctx.emit(manipulate.reshape(data, [int(np.prod(dims))]))
    return ctx.emit(index.take(flat_data, offset, axis=0))


# -- types ------------------------------------------------------------------------------------
def cast_dtype(to):
    """The rvm dtype of the ONNX element type ``to`` (an op attribute)."""
    if to not in ONNX_DTYPES:
        raise OnnxImportError(f"Cast to element type {to} is not supported; expected one of "
                              f"{sorted(set(ONNX_DTYPES.values()))}")
    return ONNX_DTYPES[to]


def cast(ctx, value, dtype):
    """``value`` converted to ``dtype`` (numpy arrays fold)."""
    if isinstance(value, np.ndarray):
        if value.dtype == object and dtype == "int64":
            return value
        value = static_array(value, "a shape") if value.dtype == object else value
        return value.astype(DataType(dtype).numpy_dtype)
    if ctx.dtype(value) == dtype:
        return value
    return ctx.emit(unary.astype(value, dtype))


@converter("Identity")
def _identity(ctx, inputs, attrs):
    return inputs[0]


# -- broadcasting, tiling, ranges ---------------------------------------------------------
@converter("Expand")
def _expand(ctx, inputs, attrs):
    data = inputs[0]
    if is_run_time(inputs[1]):
        static_length(ctx, inputs[1], "Expand's shape")
        target = broadcast_target(ctx, ctx.shape(data), int64_tensor(ctx, inputs[1]), "expand")
        return ctx.emit(manipulate.broadcast_to(ctx.tensor(data), target))
    target = broadcast_dims(ctx.shape(data), shape_list(ctx, inputs[1], "Expand's shape"))
    if isinstance(data, np.ndarray) and all(isinstance(d, int) for d in target):
        return np.broadcast_to(data, target).copy()
    return ctx.emit(manipulate.broadcast_to(ctx.tensor(data), target))


fold("Expand")(_expand)


@fold("Range")
def _fold_range(ctx, inputs, attrs):
    if any(v.dtype == object for v in inputs):  # a symbolic bound: a tensor at run time
        return _range(ctx, inputs, attrs)
    start, limit, delta = (v.reshape(()) for v in inputs)
    return np.arange(start, limit, delta).astype(inputs[0].dtype)


@converter("Range")
def _range(ctx, inputs, attrs):
    dtype = ctx.dtype(inputs[0])
    if any(is_run_time(v) for v in inputs):
        return runtime_shape.arange(ctx, *inputs, dtype)
    start, limit, delta = (ctx.constant(v, f"Range's {w}").reshape(()).item()
                           for v, w in zip(inputs, ("start", "limit", "delta")))
    symbolic = any(isinstance(v, PrimExpr) for v in (start, limit, delta))
    if symbolic and (isinstance(delta, PrimExpr) or delta <= 0):
        # arange's symbolic length needs a constant positive step; the run-time form
        # computes the length from the values (and refuses a zero step)
        return runtime_shape.arange(ctx, *inputs, dtype)
    return ctx.emit(create.arange(start, limit, delta, dtype=dtype))
