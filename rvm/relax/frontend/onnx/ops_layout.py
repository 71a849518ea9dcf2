"""ONNX operators that lay data out anew: Pad, Tile, Trilu, DepthToSpace, SpaceToDepth,
EyeLike, OneHot.

Pad's reflect, edge and wrap modes are a ``take`` of the mirrored, clamped or
wrapped indices (computed at import); constant padding concatenates filled
blocks. Trilu keeps a triangle through a mask, computed at run time when k is.
Tile's repeats, Pad's pads, axes and constant value and OneHot's depth may be known only
at run time (``runtime_shape``).
"""
import numpy as np

from rvm.relax.frontend.onnx.ops_shape import cast_dtype, normalize_axis
from rvm.relax.frontend.onnx import runtime_shape
from rvm.relax.frontend.onnx.registry import converter, optional_const
from rvm.relax.frontend.onnx.runtime_shape import int64_tensor, is_run_time, static_length
from rvm.relax.op import binary, create, index, join, manipulate, search, unary


@converter("Tile")
def _tile(ctx, inputs, attrs):
    if is_run_time(inputs[1]):
        static_length(ctx, inputs[1], "Tile's repeats")
        return runtime_shape.tile(ctx, inputs[0], int64_tensor(ctx, inputs[1]))
    repeats = [int(r) for r in ctx.constant(inputs[1], "Tile's repeats").reshape(-1)]
    return ctx.emit(join.tile(ctx.tensor(inputs[0]), repeats))


@converter("Trilu")
def _trilu(ctx, inputs, attrs):
    x = ctx.tensor(inputs[0])
    dims = ctx.shape(x)
    k = inputs[1] if len(inputs) > 1 and inputs[1] is not None else np.array(0)
    rows, cols = dims[-2], dims[-1]
    upper = attrs.get("upper", 1)
    static = isinstance(rows, int) and isinstance(cols, int)
    if is_run_time(k) or not static:  # the mask is computed at run time
        if static:
            diagonal = ctx.tensor(np.arange(cols, dtype="int64")[None, :]
                                  - np.arange(rows, dtype="int64")[:, None])
        else:  # column minus row index over symbolic matrix dimensions
            diagonal = ctx.emit(binary.subtract(
                manipulate.reshape(create.arange(0, cols, 1, dtype="int64"), [1, cols]),
                manipulate.reshape(create.arange(0, rows, 1, dtype="int64"), [rows, 1])))
        k = ctx.emit(manipulate.reshape(int64_tensor(ctx, k), []))
        mask = ctx.emit((binary.greater_equal if upper else binary.less_equal)(diagonal, k))
    else:
        fn = np.triu if upper else np.tril
        mask = ctx.tensor(fn(np.ones((rows, cols), bool), int(k.reshape(()))))
    zero = ctx.tensor(np.array(0, ctx.dtype(x)))
    return ctx.emit(search.where(mask, x, zero))


@converter("Pad")
def _pad(ctx, inputs, attrs):
    x = ctx.tensor(inputs[0])
    dims = ctx.shape(x)
    axes = inputs[3] if len(inputs) > 3 else None
    pads = inputs[1]
    if is_run_time(axes):  # the amounts of every axis, zero where axes does not name it
        count = static_length(ctx, axes, "Pad's axes")
        if static_length(ctx, pads, "Pad's pads") != 2 * count:
            raise ValueError(f"Pad's pads must hold 2 x {count} amounts, got {ctx.shape(pads)}")
        pads, axes = int64_tensor(ctx, pads), int64_tensor(ctx, axes)
        pads = ctx.emit(join.concat([runtime_shape.per_axis(
            ctx, axes, ctx.emit(index.strided_slice(pads, [0], [k * count], [(k + 1) * count])),
            [0] * len(dims), "pad") for k in range(2)], axis=0))
        axes = None
    axes = optional_const(ctx, axes, "Pad's axes")
    axes = list(range(len(dims))) if axes is None else \
        [normalize_axis(a, len(dims)) for a in axes.reshape(-1)]
    mode = attrs.get("mode", "constant")
    if mode not in ("constant", "reflect", "edge", "wrap"):
        raise ValueError(f"Pad mode {mode!r}; expected constant, reflect, edge or wrap")
    value = inputs[2] if len(inputs) > 2 and inputs[2] is not None else np.array(0)
    if is_run_time(pads):
        if static_length(ctx, pads, "Pad's pads") != 2 * len(axes):
            raise ValueError(f"Pad's pads must hold 2 x {len(axes)} amounts, got "
                             f"{ctx.shape(pads)}")
        value = ctx.emit(manipulate.reshape(ctx.tensor(value, ctx.dtype(x))
                                            if not is_run_time(value) else value, []))
        if ctx.dtype(value) != ctx.dtype(x):
            value = ctx.emit(unary.astype(value, ctx.dtype(x)))
        return runtime_shape.pad(ctx, x, int64_tensor(ctx, pads), axes, mode, value)
    pads = [int(p) for p in ctx.constant(pads, "Pad's pads").reshape(-1)]
    value = ctx.constant(value, "Pad's constant_value")
    count = len(axes)
    for k, axis in enumerate(axes):
        x = pad_axis(ctx, x, axis, pads[k], pads[k + count], mode,
                     np.asarray(value).reshape(()).item() if np.size(value) else 0)
    return x


def pad_axis(ctx, x, axis, before, after, mode, value=0):
    """``x`` padded along ``axis`` by ``before``/``after`` elements (negative: cropped)."""
    if before == 0 and after == 0:
        return x
    dims = ctx.shape(x)
    length = dims[axis]
    if not isinstance(length, int):
        raise ValueError("padding a symbolic axis is not supported")
    if mode != "constant":
        positions = np.arange(-before, length + after)
        if mode == "edge":
            positions = np.clip(positions, 0, length - 1)
        elif mode == "wrap":
            positions = positions % length
        else:  # reflect: mirror around the first and last elements
            period = 2 * (length - 1) if length > 1 else 1
            positions = np.abs(positions) % period
            positions = np.where(positions >= length, period - positions, positions)
        return ctx.emit(index.take(x, ctx.tensor(positions.astype("int64")), axis=axis))
    if before < 0 or after < 0:
        x = ctx.emit(index.strided_slice(x, [axis], [max(-before, 0)],
                                         [length - max(-after, 0)], [1]))
        before, after = max(before, 0), max(after, 0)
    parts = []
    dtype = ctx.dtype(x)
    for size in (before, None, after):
        if size is None:
            parts.append(x)
        elif size > 0:
            shape = list(ctx.shape(x))
            shape[axis] = size
            parts.append(ctx.emit(create.full(shape, ctx.tensor(np.array(value, dtype)),
                                              dtype)))
    return ctx.emit(join.concat(parts, axis=axis)) if len(parts) > 1 else x


@converter("DepthToSpace", "SpaceToDepth")
def _depth_space(ctx, inputs, attrs):
    x = ctx.tensor(inputs[0])
    n, c, h, w = ctx.shape(x)
    b = attrs["blocksize"]
    if ctx.node.op_type == "SpaceToDepth":
        x = ctx.emit(manipulate.reshape(x, [n, c, h // b, b, w // b, b]))
        order = [0, 3, 5, 1, 2, 4] if attrs.get("mode", "DCR") == "DCR" else [0, 1, 3, 5, 2, 4]
        x = ctx.emit(manipulate.permute_dims(x, order))
        return ctx.emit(manipulate.reshape(x, [n, c * b * b, h // b, w // b]))
    if attrs.get("mode", "DCR") == "DCR":
        x = ctx.emit(manipulate.reshape(x, [n, b, b, c // (b * b), h, w]))
        x = ctx.emit(manipulate.permute_dims(x, [0, 3, 4, 1, 5, 2]))
    else:  # CRD
        x = ctx.emit(manipulate.reshape(x, [n, c // (b * b), b, b, h, w]))
        x = ctx.emit(manipulate.permute_dims(x, [0, 1, 4, 2, 5, 3]))
    return ctx.emit(manipulate.reshape(x, [n, c // (b * b), h * b, w * b]))


@converter("EyeLike")
def _eye_like(ctx, inputs, attrs):
    rows, cols = ctx.shape(inputs[0])
    if not isinstance(rows, int) or not isinstance(cols, int):
        raise ValueError("EyeLike needs a static shape")
    dtype = cast_dtype(attrs["dtype"]) if "dtype" in attrs else ctx.dtype(inputs[0])
    eye = np.eye(rows, cols, attrs.get("k", 0), dtype=np.bool_ if dtype == "bool" else dtype)
    return ctx.emit(create.full([rows, cols], ctx.tensor(np.array(0, eye.dtype)), dtype)) \
        if not eye.any() else ctx.tensor(eye)


@converter("OneHot")
def _one_hot(ctx, inputs, attrs):
    indices = ctx.tensor(inputs[0])
    values = ctx.tensor(inputs[2])
    rank = len(ctx.shape(indices)) + 1
    axis = normalize_axis(attrs.get("axis", -1), rank)
    dtype = ctx.dtype(indices)
    shape = [1] * rank
    if is_run_time(inputs[1]):
        depth, shape[axis] = _run_time_depth(ctx, inputs[1], dtype)
        iota = ctx.emit(manipulate.reshape(create.arange(0, shape[axis], 1, dtype=dtype),
                                           shape))
    else:
        shape[axis] = int(ctx.constant(inputs[1], "OneHot's depth").reshape(-1)[0])
        depth = ctx.tensor(np.array(shape[axis], dtype))
        iota = ctx.tensor(np.arange(shape[axis], dtype=dtype).reshape(shape))
    # negative indices count from the end of the depth
    negative = ctx.emit(binary.less(indices, ctx.tensor(np.array(0, dtype))))
    indices = ctx.emit(search.where(negative, ctx.emit(binary.add(indices, depth)), indices))
    hot = ctx.emit(binary.equal(ctx.emit(manipulate.expand_dims(indices, [axis])), iota))
    off = ctx.emit(index.take(values, ctx.tensor(np.array(0, "int64")), axis=0))
    on = ctx.emit(index.take(values, ctx.tensor(np.array(1, "int64")), axis=0))
    return ctx.emit(search.where(hot, on, off))


def _run_time_depth(ctx, value, dtype):
    """OneHot's run-time depth (any number type, truncated to an integer): ``(scalar
    tensor of dtype, symbolic dimension)``; a depth below 1 is refused at run time."""
    static_length(ctx, value, "OneHot's depth")
    depth = ctx.emit(manipulate.reshape(ctx.tensor(value), [1]))
    depth = ctx.emit(unary.astype(depth, "int64"))
    positive = ctx.emit(unary.astype(binary.greater(depth, ctx.tensor(np.array(0, "int64"))),
                                     "int64"))
    runtime_shape.shape_vars(ctx, positive, [1], "one_hot_depth_positive")
    (dim,) = runtime_shape.shape_vars(ctx, depth, [None], "one_hot_depth")
    return ctx.emit(unary.astype(manipulate.reshape(depth, []), dtype)), dim
