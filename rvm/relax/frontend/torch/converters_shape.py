"""Converters of PyTorch's shape operators: view/reshape, permute/transpose, flatten,
unsqueeze/squeeze, expand, cat/stack, split/chunk, and indexing (``getitem`` of tuples and
tensors, ``select``, ``slice``).

Sizes may be symbolic (``x.size(0)`` of a symbolic batch is a ``tir`` variable), so
new shapes are lists of ints and ``tir`` expressions.
"""
from rvm.ir.expr import PrimExpr, RelaxExpr
from rvm.relax.expr import TupleGetItem, const
from rvm.relax.op import index, join, manipulate
from rvm.relax.struct_info import TupleStructInfo
from rvm.relax.frontend.torch.converters import (
    REQUIRED, op_name, args, axis_list, converter, is_tensor, rank, tensor_sinfo,
)

_BIG = 2 ** 63 - 1  # an end bound meaning "to the end" (strided_slice clamps it)


def _shape_args(imp, node, first=1):
    """A shape given as varargs (``x.view(2, 3)``) or as one sequence (``x.view((2, 3))``)."""
    rest = [imp.value(a) for a in node.args[first:]]
    if not rest:
        for key in ("size", "shape"):
            if key in node.kwargs:
                rest = [imp.value(node.kwargs[key])]
    if len(rest) == 1 and isinstance(rest[0], (list, tuple)):
        rest = list(rest[0])
    return [_dim(d) for d in rest]


def _dim(d):
    if isinstance(d, (int, PrimExpr)):
        return d
    value = getattr(d, "value", None)
    if isinstance(value, int):
        return value
    raise TypeError(f"a size must be an int or a symbolic dimension, got {type(d).__name__}")


@converter("view", "reshape", "_unsafe_view", "view_copy")
def _reshape(imp, node):
    x = imp.value(node.args[0])
    return imp.emit(manipulate.reshape(x, _shape_args(imp, node)))


@converter("permute")
def _permute(imp, node):
    x = imp.value(node.args[0])
    dims = _shape_args(imp, node) if len(node.args) > 1 else imp.value(node.kwargs["dims"])
    return imp.emit(manipulate.permute_dims(x, axis_list(list(dims), rank(x))))


@converter("transpose", "swapaxes")
def _transpose(imp, node):
    x, dim0, dim1 = args(imp, node, ("input", REQUIRED), ("dim0", REQUIRED),
                         ("dim1", REQUIRED))
    axes = list(range(rank(x)))
    d0, d1 = axis_list([dim0, dim1], len(axes))
    axes[d0], axes[d1] = axes[d1], axes[d0]
    return imp.emit(manipulate.permute_dims(x, axes))


@converter("t", "numpy_T")
def _t(imp, node):
    (x,) = args(imp, node, ("input", REQUIRED))
    if op_name(node) == "t" and rank(x) > 2:
        raise ValueError(f"t expects a tensor of rank <= 2, got rank {rank(x)}; expected "
                         "transpose(dim0, dim1) for more axes")
    # x.T reverses all the axes (a matrix's two)
    reverse = list(range(rank(x)))[::-1]
    return x if rank(x) < 2 else imp.emit(manipulate.permute_dims(x, reverse))


@converter("flatten")
def _flatten(imp, node):
    x, start, end = args(imp, node, ("input", REQUIRED), ("start_dim", 0), ("end_dim", -1))
    return flatten(imp, x, start, end)


def flatten(imp, x, start, end):
    """Emits ``x`` with the axes ``start``..``end`` merged into one."""
    shape = list(tensor_sinfo(x).shape_values)
    start, end = axis_list([start, end], len(shape)) if shape else (0, 0)
    merged = shape[start] if shape else 1
    for d in shape[start + 1:end + 1]:
        merged = merged * d
    return imp.emit(manipulate.reshape(x, shape[:start] + [merged] + shape[end + 1:]))


@converter("unflatten")
def _unflatten(imp, node):
    x, dim, sizes = args(imp, node, ("input", REQUIRED), ("dim", REQUIRED), ("sizes", REQUIRED))
    shape = list(tensor_sinfo(x).shape_values)
    dim = axis_list(dim, len(shape))[0]
    new = shape[:dim] + [_dim(s) for s in sizes] + shape[dim + 1:]
    return imp.emit(manipulate.reshape(x, new))


@converter("unsqueeze")
def _unsqueeze(imp, node):
    x, dim = args(imp, node, ("input", REQUIRED), ("dim", REQUIRED))
    return imp.emit(manipulate.expand_dims(x, axis_list(dim, rank(x) + 1)))


@converter("squeeze")
def _squeeze(imp, node):
    x = imp.value(node.args[0])
    dims = [imp.value(d) for d in node.args[1:]] or [imp.value(node.kwargs.get("dim"))]
    dims = dims[0] if len(dims) == 1 else dims
    if dims is None:
        return imp.emit(manipulate.squeeze(x))
    shape = tensor_sinfo(x).shape_values
    keep = [a for a in axis_list(dims, rank(x)) if getattr(shape[a], "value", None) == 1]
    return imp.emit(manipulate.squeeze(x, keep)) if keep else x  # torch skips non-1 axes


@converter("expand", "expand_as", "broadcast_to")
def _expand(imp, node):
    x = imp.value(node.args[0])
    if op_name(node) == "expand_as":
        sizes = list(tensor_sinfo(imp.value(node.args[1])).shape_values)
    else:
        sizes = _shape_args(imp, node)
    shape = list(tensor_sinfo(x).shape_values)
    lead = len(sizes) - len(shape)
    sizes = [shape[k - lead] if isinstance(s, int) and s == -1 else s
             for k, s in enumerate(sizes)]
    return imp.emit(manipulate.broadcast_to(x, sizes))


@converter("cat", "concat", "concatenate")
def _cat(imp, node):
    tensors, dim = args(imp, node, ("tensors", REQUIRED), ("dim", 0))
    return imp.emit(join.concat(list(tensors), axis=dim))


@converter("split", "split_with_sizes")
def _split(imp, node):
    x, size, dim = args(imp, node, ("input", REQUIRED), ("split_size_or_sections", REQUIRED),
                        ("dim", 0))
    length = tensor_sinfo(x).shape_values[axis_list(dim, rank(x))[0]]
    if isinstance(size, int):
        total = getattr(length, "value", None)
        if total is None:
            raise ValueError("split of a symbolic dimension into pieces of a fixed size")
        cuts = list(range(size, total, size))
    else:
        cuts, acc = [], 0
        for s in list(size)[:-1]:
            acc += s
            cuts.append(acc)
        total = getattr(length, "value", None)
        if total is not None and acc + list(size)[-1] != total:
            raise ValueError(f"the sizes {list(size)} add up to {acc + list(size)[-1]}; expected "
                             f"the length {total} of axis {dim}")
    return _split_value(imp, x, cuts, dim)


@converter("chunk")
def _chunk(imp, node):
    x, chunks, dim = args(imp, node, ("input", REQUIRED), ("chunks", REQUIRED), ("dim", 0))
    return _split_value(imp, x, int(chunks), dim)


def _split_value(imp, x, spec, dim):
    out = imp.emit(join.split(x, spec, axis=dim))
    count = len(out.struct_info_.fields)
    return tuple(imp.emit(TupleGetItem(out, k)) for k in range(count))


@converter("stack")
def _stack(imp, node):
    tensors, dim = args(imp, node, ("tensors", REQUIRED), ("dim", 0))
    axis = axis_list(dim, rank(tensors[0]) + 1)[0]
    parts = [imp.emit(manipulate.expand_dims(t, [axis])) for t in tensors]
    return imp.emit(join.concat(parts, axis=axis))


@converter("getitem")
def _getitem(imp, node):
    obj, key = args(imp, node, ("input", REQUIRED), ("index", REQUIRED))
    if isinstance(obj, RelaxExpr) and isinstance(obj.struct_info_, TupleStructInfo):
        if not isinstance(key, int):
            raise TypeError(f"a tuple is indexed by an int, got {key!r}")
        return imp.emit(TupleGetItem(obj, key))
    if isinstance(obj, (list, tuple)):
        return obj[key]
    if is_tensor(obj):
        return tensor_getitem(imp, obj, key)
    raise TypeError(f"cannot index a {type(obj).__name__}")


@converter("select")
def _select(imp, node):
    x, dim, idx = args(imp, node, ("input", REQUIRED), ("dim", REQUIRED), ("index", REQUIRED))
    return imp.emit(index.take(x, const(int(idx), "int64"), axis=axis_list(dim, rank(x))[0]))


@converter("slice")
def _slice(imp, node):
    x, dim, start, end, step = args(imp, node, ("input", REQUIRED), ("dim", 0), ("start", None),
                                    ("end", None), ("step", 1))
    start = 0 if start is None else start
    end = _BIG if end is None else min(end, _BIG) if isinstance(end, int) else end
    axis = axis_list(dim, rank(x))
    # a symbolic end the program bounds by the axis (a position table sliced to the sequence
    # length) needs no clamp, so the slice keeps the plain symbolic length
    extent = getattr(tensor_sinfo(x).shape_values[axis[0]], "value", None)
    inbound = (isinstance(end, PrimExpr) and isinstance(start, int) and 0 <= start
               and step == 1 and extent is not None and imp.within(end, extent))
    return imp.emit(index.strided_slice(x, axis, [start], [end], [step],
                                        assume_inbound=inbound))


def tensor_getitem(imp, x, key):
    """``x[key]`` for ints, slices, None and ``...`` (basic indexing) and a 1-D index
    tensor (``take``)."""
    key = list(key) if isinstance(key, tuple) else [key]
    if any(is_tensor(k) and tensor_sinfo(k).dtype == "bool" for k in key):
        raise ValueError("a boolean mask gives a data-dependent shape; expected integer index "
                         "tensors")
    if len(key) == 1 and hasattr(key[0], "struct_info_"):
        return imp.emit(index.take(x, key[0], axis=0))
    ndim = rank(x)
    used = sum(1 for k in key if k is not None and k is not Ellipsis)
    if Ellipsis in key:
        at = key.index(Ellipsis)
        key = key[:at] + [slice(None)] * (ndim - used) + key[at + 1:]
    key += [slice(None)] * (ndim - used - sum(1 for k in key if k is Ellipsis))
    axes, begin, end, strides, squeeze, new_axes = [], [], [], [], [], []
    axis = position = 0  # the axis of x, the axis of the result
    for k in key:
        if k is None:
            new_axes.append(position)
            position += 1
            continue
        if isinstance(k, slice):
            position += 1
            if k != slice(None):
                axes.append(axis)
                begin.append(0 if k.start is None else k.start)
                end.append(_BIG if k.stop is None else k.stop)
                strides.append(1 if k.step is None else k.step)
        elif isinstance(k, int):
            axes.append(axis)
            begin.append(k)
            end.append(_BIG if k == -1 else k + 1)
            strides.append(1)
            squeeze.append(axis)
        else:
            raise TypeError(f"an index must be an int, a slice, None or ..., got {k!r}")
        axis += 1
    out = x
    if axes:
        out = imp.emit(index.strided_slice(out, axes, begin, end, strides))
    if squeeze:
        out = imp.emit(manipulate.squeeze(out, squeeze))
    if new_axes:
        out = imp.emit(manipulate.expand_dims(out, new_axes))
    return out
