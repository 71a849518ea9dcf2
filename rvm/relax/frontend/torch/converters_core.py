"""Converters of the core ATen forms ``ExportedProgram.run_decompositions()`` leaves
(``convolution``, ``native_layer_norm``, ``native_group_norm``,
``max_pool2d_with_indices``, ``_to_copy``, ``scalar_tensor``, ``any``/``all``, the
logical operators) and of further operators transformer and CNN code writes:
``index_select``, ``gather``, ``index`` with one index tensor, ``unbind``, ``cumsum``, ``var``,
``baddbmm``, ``hardswish``/``hardsigmoid``, ``sym_numel``, and ``copy_`` (an in-place copy
whose destination no later node reads, as transformers fills a mask with a slice assignment).

Operators whose ATen form returns statistics beside the result (``native_layer_norm``
returns the mean and the reciprocal deviation) give the result and None for the rest:
inference reads only the result, and a graph that reads the others is refused where it
does.
"""
import operator
from functools import reduce

from rvm.relax.expr import const
from rvm.relax.op import (
    binary, create, index, linear_algebra, manipulate, statistical, unary,
)
from rvm.relax.frontend.torch.converters import (
    CONVERTERS, REQUIRED, args, axis_list, converter, is_tensor, rank, tensor_sinfo,
)
from rvm.relax.frontend.torch.converters_create import _scalar_dtype
from rvm.relax.frontend.torch.converters_nn import conv2d, group_norm, layer_norm, pool2d
from rvm.relax.frontend.torch.converters_shape import _split_value
from rvm.relax.frontend.torch.importer import torch_dtype

converter("_to_copy")(CONVERTERS["to"])


@converter("scalar_tensor")
def _scalar_tensor(imp, node):
    (value,) = args(imp, node, ("s", REQUIRED))
    dtype = node.kwargs.get("dtype")
    return const(value, _scalar_dtype(value) if dtype is None else torch_dtype(dtype))


@converter("convolution")
def _convolution(imp, node):
    x, w, b, stride, padding, dilation, transposed, _, groups = args(
        imp, node, ("input", REQUIRED), ("weight", REQUIRED), ("bias", None), ("stride", 1),
        ("padding", 0), ("dilation", 1), ("transposed", False), ("output_padding", 0),
        ("groups", 1))
    if transposed or rank(x) != 4:
        raise ValueError(f"convolution: only 2-D convolution (a rank-4 input, not "
                         f"transposed) is supported, got rank {rank(x)}, transposed="
                         f"{bool(transposed)}")
    return conv2d(imp, x, w, b, stride, padding, dilation, groups)


@converter("native_layer_norm")
def _native_layer_norm(imp, node):
    x, shape, w, b, eps = args(imp, node, ("input", REQUIRED), ("normalized_shape", REQUIRED),
                               ("weight", None), ("bias", None), ("eps", 1e-5))
    return (layer_norm(imp, x, shape, w, b, eps), None, None)


@converter("native_group_norm")
def _native_group_norm(imp, node):
    x, w, b, _, _, _, groups, eps = args(
        imp, node, ("input", REQUIRED), ("weight", None), ("bias", None), ("N", REQUIRED),
        ("C", REQUIRED), ("HxW", REQUIRED), ("group", REQUIRED), ("eps", 1e-5))
    return (group_norm(imp, x, groups, w, b, eps), None, None)


@converter("max_pool2d_with_indices")
def _max_pool2d_with_indices(imp, node):
    x, kernel, stride, padding, dilation, ceil_mode = args(
        imp, node, ("input", REQUIRED), ("kernel_size", REQUIRED), ("stride", None),
        ("padding", 0), ("dilation", 1), ("ceil_mode", False))
    return (pool2d(imp, "max", x, kernel, stride, padding, dilation, ceil_mode), None)


def _any_all(reduce_fn):
    def convert(imp, node):
        x, dim, keepdim = args(imp, node, ("input", REQUIRED), ("dim", None),
                               ("keepdim", False))
        axes = None if dim is None else axis_list(dim, rank(x))
        flags = imp.emit(unary.astype(x, "int32")) if tensor_sinfo(x).dtype == "bool" else \
            imp.emit(unary.astype(imp.emit(binary.not_equal(x, 0)), "int32"))
        folded = imp.emit(reduce_fn(flags, axis=axes, keepdims=bool(keepdim)))
        return imp.emit(binary.not_equal(folded, const(0, "int32")))

    return convert


converter("any")(_any_all(statistical.max))
converter("all")(_any_all(statistical.min))


def _as_bool(imp, x):
    if tensor_sinfo(x).dtype == "bool":
        return x
    return imp.emit(binary.not_equal(x, 0))


@converter("logical_not", "bitwise_not")
def _logical_not(imp, node):
    (x,) = args(imp, node, ("input", REQUIRED))
    if node.target.__name__.startswith("bitwise") and tensor_sinfo(x).dtype != "bool":
        raise TypeError(f"bitwise_not of {tensor_sinfo(x).dtype} is not supported; expected a "
                        "bool tensor")
    return imp.emit(unary.logical_not(_as_bool(imp, x)))


def _logical(relax_fn, bitwise):
    def convert(imp, node):
        lhs, rhs = args(imp, node, ("input", REQUIRED), ("other", REQUIRED))
        if bitwise:
            for value in (lhs, rhs):
                if is_tensor(value) and tensor_sinfo(value).dtype != "bool":
                    raise TypeError(f"bitwise operators of {tensor_sinfo(value).dtype} are "
                                    "not supported; expected bool tensors")
        lhs = _as_bool(imp, lhs) if is_tensor(lhs) else const(bool(lhs), "bool")
        rhs = _as_bool(imp, rhs) if is_tensor(rhs) else const(bool(rhs), "bool")
        return imp.emit(relax_fn(lhs, rhs))

    return convert


converter("logical_and")(_logical(binary.logical_and, False))
converter("logical_or")(_logical(binary.logical_or, False))
converter("bitwise_and", "__and__", "and_")(_logical(binary.logical_and, True))
converter("bitwise_or", "__or__", "or_")(_logical(binary.logical_or, True))


@converter("index_select")
def _index_select(imp, node):
    x, dim, idx = args(imp, node, ("input", REQUIRED), ("dim", REQUIRED), ("index", REQUIRED))
    return imp.emit(index.take(x, idx, axis=axis_list(dim, rank(x))[0]))


@converter("gather")
def _gather(imp, node):
    x, dim, idx = args(imp, node, ("input", REQUIRED), ("dim", REQUIRED), ("index", REQUIRED))
    return imp.emit(index.gather_elements(x, idx, axis=axis_list(dim, rank(x))[0]))


@converter("index")
def _index(imp, node):
    x, indices = args(imp, node, ("input", REQUIRED), ("indices", REQUIRED))
    given = [axis for axis, i in enumerate(indices) if i is not None]
    if not given or given != list(range(given[0], given[-1] + 1)):
        raise ValueError(f"index: the index tensors must be on adjacent axes (x[:, i, j]), got "
                         f"them on axes {given}")
    tensors = [indices[axis] for axis in given]
    for idx in tensors:
        if not is_tensor(idx) or tensor_sinfo(idx).dtype == "bool":
            raise ValueError("index: a boolean mask gives a data-dependent shape; expected "
                             "integer index tensors")
    return advanced_index(imp, x, given[0], tensors)


def _broadcast_shape(shapes):
    ndim = max(len(s) for s in shapes)
    out = []
    for k in range(ndim):
        dims = [s[k - ndim + len(s)] for s in shapes if k - ndim + len(s) >= 0]
        wide = [d for d in dims if getattr(d, "value", None) != 1]
        out.append(wide[0] if wide else dims[0])
    return out


def advanced_index(imp, x, axis, tensors):
    """``x[..., i0, i1, ...]`` with integer index tensors on the adjacent axes from ``axis``
    (torch's and numpy's advanced indexing): the indices broadcast together to ``B``, the
    result is ``x.shape[:axis] + B + x.shape[axis + len(tensors):]``. The first index is a
    ``take``; each further one picks along its axis with ``gather_elements``, so no stride
    of a (possibly symbolic) dimension is needed."""
    shape = list(tensor_sinfo(x).shape_values)
    lead = shape[:axis]
    common = _broadcast_shape([list(tensor_sinfo(i).shape_values) for i in tensors])
    first = imp.emit(manipulate.broadcast_to(tensors[0], common))
    out = imp.emit(index.take(x, first, axis=axis))
    at = axis + len(common)  # where the next indexed axis of x now is
    for step, idx in enumerate(tensors[1:], start=1):
        rest = shape[axis + step + 1:]
        idx = imp.emit(manipulate.broadcast_to(idx, common))
        idx = imp.emit(manipulate.reshape(idx, [1] * len(lead) + common + [1] * (1 + len(rest))))
        idx = imp.emit(manipulate.broadcast_to(idx, lead + common + [1] + rest))
        out = imp.emit(index.gather_elements(out, idx, axis=at))
        out = imp.emit(manipulate.squeeze(out, [at]))
    return out


@converter("unbind")
def _unbind(imp, node):
    x, dim = args(imp, node, ("input", REQUIRED), ("dim", 0))
    axis = axis_list(dim, rank(x))[0]
    count = getattr(tensor_sinfo(x).shape_values[axis], "value", None)
    if count is None:
        raise ValueError("unbind of a symbolic dimension: the number of results must be known")
    parts = _split_value(imp, x, int(count), axis)
    return tuple(imp.emit(manipulate.squeeze(p, [axis])) for p in parts)


@converter("cumsum")
def _cumsum(imp, node):
    x, dim, dtype = args(imp, node, ("input", REQUIRED), ("dim", REQUIRED), ("dtype", None))
    source = tensor_sinfo(x).dtype
    if dtype is None and (source.is_bool or not source.is_float):
        dtype = "int64"  # torch sums bools and integers in int64
    elif dtype is not None:
        dtype = torch_dtype(dtype)
    if dtype is not None and dtype != source:
        x = imp.emit(unary.astype(x, dtype))
    return imp.emit(statistical.cumsum(x, axis=axis_list(dim, rank(x))[0]))


@converter("var")
def _var(imp, node):
    x = imp.value(node.args[0])
    dim = imp.value(node.args[1] if len(node.args) > 1 else node.kwargs.get("dim"))
    rest = node.args[2:]  # var.dim: (unbiased, keepdim); var.correction: keywords
    unbiased = rest[0] if rest and isinstance(rest[0], bool) else node.kwargs.get("unbiased",
                                                                                  True)
    keepdim = bool(rest[1] if len(rest) > 1 else node.kwargs.get("keepdim", False))
    correction = node.kwargs.get("correction")
    correction = (1 if unbiased else 0) if correction is None else correction
    axes = axis_list(dim, rank(x))
    out = imp.emit(statistical.variance(x, axis=axes, keepdims=keepdim))
    if not correction:
        return out
    dims = [getattr(tensor_sinfo(x).shape_values[a], "value", None) for a in axes]
    if any(d is None for d in dims):
        raise ValueError("var with a correction over a symbolic dimension is not supported")
    count = reduce(operator.mul, dims, 1)
    return imp.emit(binary.multiply(out, count / max(count - correction, 1)))


@converter("baddbmm")
def _baddbmm(imp, node):
    bias, lhs, rhs, beta, alpha = args(imp, node, ("input", REQUIRED), ("batch1", REQUIRED),
                                       ("batch2", REQUIRED), ("beta", 1), ("alpha", 1))
    out = imp.emit(linear_algebra.matmul(lhs, rhs))
    if alpha != 1:
        out = imp.emit(binary.multiply(out, alpha))
    if beta == 0:
        return out
    if beta != 1:
        bias = imp.emit(binary.multiply(bias, beta))
    return imp.emit(binary.add(out, bias))


def _hard_sigmoid(imp, x):
    dtype = tensor_sinfo(x).dtype
    if dtype is not None and not dtype.is_float:
        raise TypeError(f"hardsigmoid/hardswish of a {dtype} tensor is not supported (torch "
                        "refuses it too); expected a float tensor")
    shifted = imp.emit(binary.add(x, 3.0))
    return imp.emit(binary.divide(imp.emit(unary.clip(shifted, 0.0, 6.0)), 6.0))


@converter("hardsigmoid", "hardsigmoid_")
def _hardsigmoid(imp, node):
    (x,) = args(imp, node, ("input", REQUIRED))
    return _hard_sigmoid(imp, x)


@converter("hardswish", "hardswish_")
def _hardswish(imp, node):
    (x,) = args(imp, node, ("input", REQUIRED))
    return imp.emit(binary.multiply(x, _hard_sigmoid(imp, x)))


@converter("sym_numel", "numel")
def _numel(imp, node):
    (x,) = args(imp, node, ("input", REQUIRED))
    shape = tensor_sinfo(x).shape_values
    if shape is None:
        raise TypeError("the shape of the input is unknown")
    return reduce(operator.mul, [getattr(d, "value", d) for d in shape], 1)


@converter("copy_")
def _copy(imp, node):
    dst, src, _ = args(imp, node, ("input", REQUIRED), ("src", REQUIRED),
                       ("non_blocking", False))
    target = node.args[0] if node.args else node.kwargs["input"]
    later = _read_after(target, node)
    if later is not None:
        raise ValueError(f"copy_ writes into '{target.name}', which node '{later.name}' reads "
                         "afterwards; expected a copy whose destination is read only through "
                         "the copy's result")
    sinfo = tensor_sinfo(dst, "the destination")
    if not is_tensor(src):
        return imp.emit(create.full_like(dst, const(src, sinfo.dtype)))
    if tensor_sinfo(src).dtype != sinfo.dtype:
        src = imp.emit(unary.astype(src, str(sinfo.dtype)))
    return imp.emit(manipulate.broadcast_to(src, list(sinfo.shape_values)))


def _read_after(target, node):
    """The first node after ``node`` in graph order that reads ``target`` (which ``node``
    writes in place), or None: the value such a node sees is the written one."""
    readers = set(getattr(target, "users", ())) - {node}
    step = node.next
    while readers and step is not None and step.op != "root":
        if step in readers:
            return step
        step = step.next
    return None
