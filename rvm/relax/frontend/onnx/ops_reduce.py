"""ONNX reductions, scans and linear algebra: Reduce*, ArgMax/ArgMin, CumSum/CumProd, MatMul,
Gemm and Einsum.

Reductions take their axes from an attribute (older opsets) or an optional
input (ReduceSum from opset 13, the others from 18), which may be known only at
run time (``runtime_shape``); the composite ones are built of Relax reductions
(ReduceL2 is ``sqrt(sum(x * x))``). CumSum's axis may be a run-time value too
(the sum along every axis, one chosen by it). Einsum
multiplies its operands broadcast over every letter and sums the letters the
output drops, with matmul for the two-operand contractions of one letter.
"""
import numpy as np

from rvm.relax.frontend.onnx.common import is_float
from rvm.relax.frontend.onnx.ops_math import scalar
from rvm.relax.frontend.onnx.ops_shape import normalize_axis
from rvm.relax.frontend.onnx import runtime_shape
from rvm.relax.frontend.onnx.registry import converter
from rvm.relax.frontend.onnx.runtime_shape import int64_tensor, is_run_time, static_length
from rvm.relax.op import binary, index, linear_algebra, manipulate, search, statistical, unary
from rvm.runtime.data_type import DataType

_AXES_AS_INPUT = {"ReduceSum": 13}


def _reduce_axes(ctx, inputs, attrs, op_type):
    ndim = ctx.ndim(inputs[0])
    if ctx.opset >= _AXES_AS_INPUT.get(op_type, 18):
        axes = inputs[1] if len(inputs) > 1 else None
        if is_run_time(axes) and static_length(ctx, axes, f"{op_type}'s axes") == 0:
            axes = None  # no axes, whatever the run time holds
        axes = None if axes is None else [int(a) for a in ctx.constant(
            axes, f"{op_type}'s axes").reshape(-1)]
    else:
        axes = attrs.get("axes")
    if not axes:
        if attrs.get("noop_with_empty_axes", 0):
            return None
        return list(range(ndim))
    return sorted(normalize_axis(a, ndim) for a in axes)


@converter("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
           "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare")
def _reduce(ctx, inputs, attrs):
    op = ctx.node.op_type
    x = ctx.tensor(inputs[0])
    keep = bool(attrs.get("keepdims", 1))
    if _run_time_axes(ctx, inputs, op, x):
        return _reduce_run_time_axes(ctx, op, x, int64_tensor(ctx, inputs[1]), keep)
    axes = _reduce_axes(ctx, inputs, attrs, op)
    if axes is None:  # noop_with_empty_axes
        return x
    simple = {"ReduceSum": statistical.sum, "ReduceMean": statistical.mean,
              "ReduceMax": statistical.max, "ReduceMin": statistical.min,
              "ReduceProd": statistical.prod}
    if op in simple:
        return ctx.emit(simple[op](x, axis=axes, keepdims=keep))
    if op == "ReduceL1":
        return ctx.emit(statistical.sum(ctx.emit(unary.abs(x)), axis=axes, keepdims=keep))
    if op in ("ReduceL2", "ReduceSumSquare"):
        total = ctx.emit(statistical.sum(ctx.emit(binary.multiply(x, x)), axis=axes,
                                         keepdims=keep))
        if op == "ReduceSumSquare":
            return total
        if not is_float(ctx.dtype(x)):
            root = ctx.emit(unary.sqrt(ctx.emit(unary.astype(total, "float64"))))
            return ctx.emit(unary.astype(root, ctx.dtype(x)))
        return ctx.emit(unary.sqrt(total))
    if op == "ReduceLogSum":
        return ctx.emit(unary.log(ctx.emit(statistical.sum(x, axis=axes, keepdims=keep))))
    # ReduceLogSumExp, shifted by the maximum so that exp does not overflow
    peak = ctx.emit(statistical.max(x, axis=axes, keepdims=True))
    total = ctx.emit(statistical.sum(ctx.emit(unary.exp(ctx.emit(binary.subtract(x, peak)))),
                                     axis=axes, keepdims=True))
    out = ctx.emit(binary.add(ctx.emit(unary.log(total)), peak))
    return out if keep else ctx.emit(manipulate.squeeze(out, axes))


def _run_time_axes(ctx, inputs, op, x):
    """Whether the axes are a run-time input: a non-empty 1-D tensor (an empty one names
    no axes whatever it holds)."""
    if ctx.opset < _AXES_AS_INPUT.get(op, 18) or len(inputs) < 2 or \
            not is_run_time(inputs[1]):
        return False
    return static_length(ctx, inputs[1], f"{op}'s axes") > 0


def _identity(op, dtype):
    """The value a reduction gives over no elements."""
    np_dtype = np.dtype(DataType(dtype).numpy_dtype)
    if op in ("ReduceMax", "ReduceMin"):
        if np_dtype.kind == "b":
            return op == "ReduceMin"
        if np_dtype.kind in "iu":
            info = np.iinfo(np_dtype)
            return info.min if op == "ReduceMax" else info.max
        return -np.inf if op == "ReduceMax" else np.inf
    return {"ReduceProd": 1, "ReduceMean": np.nan, "ReduceLogSum": -np.inf,
            "ReduceLogSumExp": -np.inf}.get(op, 0)


def _reduce_run_time_axes(ctx, op, x, axes, keep):
    """A reduction over axes known at run time: each axis is reduced in place when
    selected (``runtime_shape.reduce_in_place``), then the selected axes are cut to one
    element (and removed unless ``keep``)."""
    selected = runtime_shape.selected_axes(ctx, axes, ctx.ndim(x))
    dims = ctx.shape(x)
    if any(isinstance(d, int) and d == 0 for d in dims):  # no elements: the identity
        return runtime_shape.reduced_fill(ctx, dims, selected, axes, keep,
                                          _identity(op, ctx.dtype(x)), ctx.dtype(x))

    def over(value, fn):
        return runtime_shape.reduce_in_place(
            ctx, value, selected, lambda v, k: ctx.emit(fn(v, axis=[k], keepdims=True)))

    simple = {"ReduceSum": statistical.sum, "ReduceMean": statistical.mean,
              "ReduceMax": statistical.max, "ReduceMin": statistical.min,
              "ReduceProd": statistical.prod}
    if op in simple:
        out = over(x, simple[op])
    elif op == "ReduceL1":
        out = over(ctx.emit(unary.abs(x)), statistical.sum)
    elif op in ("ReduceL2", "ReduceSumSquare"):
        out = over(ctx.emit(binary.multiply(x, x)), statistical.sum)
        if op == "ReduceL2" and not is_float(ctx.dtype(x)):
            out = ctx.emit(unary.astype(unary.sqrt(unary.astype(out, "float64")),
                                        ctx.dtype(x)))
        elif op == "ReduceL2":
            out = ctx.emit(unary.sqrt(out))
    elif op == "ReduceLogSum":
        out = ctx.emit(unary.log(over(x, statistical.sum)))
    else:  # ReduceLogSumExp, shifted by the maximum
        peak = over(x, statistical.max)
        total = over(ctx.emit(unary.exp(binary.subtract(x, peak))), statistical.sum)
        out = ctx.emit(binary.add(unary.log(total), peak))
    return runtime_shape.keep_reduced(ctx, out, selected, axes, keep)


def reverse(ctx, x, axis):
    """``x`` reversed along ``axis`` (static extent)."""
    length = ctx.shape(x)[axis]
    if not isinstance(length, int):
        raise ValueError("reversing a symbolic axis is not supported")
    return ctx.emit(index.take(x, ctx.tensor(np.arange(length - 1, -1, -1, dtype="int64")),
                               axis=axis))


@converter("ArgMax", "ArgMin")
def _arg(ctx, inputs, attrs):
    x = ctx.tensor(inputs[0])
    axis = normalize_axis(attrs.get("axis", 0), ctx.ndim(x))
    keep = bool(attrs.get("keepdims", 1))
    fn = search.argmax if ctx.node.op_type == "ArgMax" else search.argmin
    if not attrs.get("select_last_index", 0):
        return cast_int64(ctx, ctx.emit(fn(x, axis=axis, keepdims=keep)))
    # the last extreme: the first one of the reversed axis, counted from the end
    found = cast_int64(ctx, ctx.emit(fn(reverse(ctx, x, axis), axis=axis, keepdims=keep)))
    last = scalar(ctx, ctx.shape(x)[axis] - 1, "int64")
    return ctx.emit(binary.subtract(last, found))


def cast_int64(ctx, x):
    """``x`` as int64 (unchanged when it is)."""
    return x if ctx.dtype(x) == "int64" else ctx.emit(unary.astype(x, "int64"))


@converter("CumSum", "CumProd")
def _cumsum(ctx, inputs, attrs):
    x = ctx.tensor(inputs[0])
    if is_run_time(inputs[1]):
        # the axis decides values, not the shape: every axis's sum, chosen at run time
        axis = ctx.emit(manipulate.reshape(int64_tensor(ctx, inputs[1]), []))
        rank = ctx.ndim(x)
        axis = ctx.emit(search.where(binary.less(axis, scalar(ctx, 0, "int64")),
                                     binary.add(axis, scalar(ctx, rank, "int64")), axis))
        inside = binary.logical_and(binary.greater_equal(axis, scalar(ctx, 0, "int64")),
                                    binary.less(axis, scalar(ctx, rank, "int64")))
        inside = ctx.emit(manipulate.reshape(unary.astype(inside, "int64"), [1]))
        runtime_shape.shape_vars(ctx, inside, [1], "cumsum_axis_in_range")
        out = None
        for k in range(rank):
            along = _cumsum_along(ctx, x, k, attrs)
            out = along if out is None else ctx.emit(search.where(
                binary.equal(axis, scalar(ctx, k, "int64")), along, out))
        return out
    axis = normalize_axis(int(ctx.constant(inputs[1], f"{ctx.node.op_type}'s axis").reshape(())),
                          ctx.ndim(x))
    return _cumsum_along(ctx, x, axis, attrs)


def _cumsum_along(ctx, x, axis, attrs):
    backward = bool(attrs.get("reverse", 0))
    if backward:
        x = reverse(ctx, x, axis)
    scan = statistical.cumprod if ctx.node.op_type == "CumProd" else statistical.cumsum
    out = ctx.emit(scan(x, axis=axis, exclusive=bool(attrs.get("exclusive", 0))))
    return reverse(ctx, out, axis) if backward else out


@converter("MatMul")
def _matmul(ctx, inputs, attrs):
    lhs, rhs = (ctx.tensor(v) for v in inputs)
    return ctx.emit(linear_algebra.matmul(lhs, rhs))


@converter("Gemm")
def _gemm(ctx, inputs, attrs):
    a, b = ctx.tensor(inputs[0]), ctx.tensor(inputs[1])
    c = inputs[2] if len(inputs) > 2 else None
    if attrs.get("transA", 0):
        a = ctx.emit(manipulate.permute_dims(a, [1, 0]))
    if attrs.get("transB", 0):
        b = ctx.emit(manipulate.permute_dims(b, [1, 0]))
    out = ctx.emit(linear_algebra.matmul(a, b))
    alpha, beta = attrs.get("alpha", 1.0), attrs.get("beta", 1.0)
    dtype = ctx.dtype(out)
    if alpha != 1.0:
        out = ctx.emit(binary.multiply(out, scalar(ctx, alpha, dtype)))
    if c is None or beta == 0.0:
        return out
    c = ctx.tensor(c)
    if beta != 1.0:
        c = ctx.emit(binary.multiply(c, scalar(ctx, beta, dtype)))
    return ctx.emit(binary.add(out, c))


def _parse_einsum(equation, ranks):
    equation = equation.replace(" ", "")
    lhs, _, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise ValueError(f"Einsum equation {equation!r} has {len(terms)} operands, the node "
                         f"{len(ranks)}")
    spare = [chr(c) for c in range(ord("A"), ord("Z") + 1) if chr(c) not in equation]
    ellipsis = max((r - len(t.replace("...", "")) for t, r in zip(terms, ranks)
                    if "..." in t), default=0)
    dots = "".join(spare[:ellipsis])
    parsed = []
    for term, rank in zip(terms, ranks):
        if "..." in term:
            own = rank - len(term.replace("...", ""))
            term = term.replace("...", dots[ellipsis - own:])
        if len(term) != rank:
            raise ValueError(f"Einsum term {term!r} does not match an operand of rank {rank}")
        parsed.append(term)
    if "->" in equation:
        output = rhs.replace("...", dots)
    else:
        counts = {}
        for term in parsed:
            for letter in term:
                counts[letter] = counts.get(letter, 0) + 1
        output = dots + "".join(sorted(l for l, n in counts.items() if n == 1 and
                                       l not in dots))
    return parsed, output


@converter("Einsum")
def _einsum(ctx, inputs, attrs):
    operands = [ctx.tensor(v) for v in inputs]
    terms, output = _parse_einsum(attrs["equation"], [ctx.ndim(v) for v in operands])
    letters = list(output) + sorted({l for t in terms for l in t} - set(output))
    letters = list(dict.fromkeys(letters))
    product = None
    for term, value in zip(terms, operands):
        value, term = _diagonals(ctx, value, term)
        order = [term.index(l) for l in letters if l in term]
        if order != list(range(len(term))):
            value = ctx.emit(manipulate.permute_dims(value, order))
        missing = [k for k, l in enumerate(letters) if l not in term]
        if missing:
            value = ctx.emit(manipulate.expand_dims(value, missing))
        product = value if product is None else ctx.emit(binary.multiply(product, value))
    summed = list(range(len(output), len(letters)))
    if summed:
        product = ctx.emit(statistical.sum(product, axis=summed, keepdims=False))
    return product


def _diagonals(ctx, value, term):
    """``value`` with each letter repeated in ``term`` reduced to its diagonal."""
    while len(set(term)) != len(term):
        letter = next(l for l in term if term.count(l) > 1)
        first = term.index(letter)
        second = term.index(letter, first + 1)
        dims = ctx.shape(value)
        n = dims[first]
        if not isinstance(n, int):
            raise ValueError("an Einsum diagonal needs a static extent")
        order = [a for a in range(len(term)) if a != second]
        order.insert(first + 1, second)
        value = ctx.emit(manipulate.permute_dims(value, order))
        merged = [dims[a] for a in order]
        merged[first:first + 2] = [n * n]
        value = ctx.emit(manipulate.reshape(value, merged))
        picks = ctx.tensor(np.arange(n, dtype="int64") * (n + 1))
        value = ctx.emit(index.take(value, picks, axis=first))
        term = term[:second] + term[second + 1:]
    return value, term
