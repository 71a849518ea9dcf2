"""ONNX reductions, scans and linear algebra: Reduce*, ArgMax/ArgMin, CumSum, MatMul,
Gemm and Einsum.

Reductions take their axes from an attribute (older opsets) or an optional
input (ReduceSum from opset 13, the others from 18); the composite ones are
built of Relax reductions (ReduceL2 is ``sqrt(sum(x * x))``). Einsum
multiplies its operands broadcast over every letter and sums the letters the
output drops, with matmul for the two-operand contractions of one letter.
"""
import numpy as np

from rvm.relax.frontend.onnx.common import is_float
from rvm.relax.frontend.onnx.ops_math import scalar
from rvm.relax.frontend.onnx.ops_shape import normalize_axis
from rvm.relax.frontend.onnx.registry import converter
from rvm.relax.op import binary, index, linear_algebra, manipulate, search, statistical, unary

_AXES_AS_INPUT = {"ReduceSum": 13}


def _reduce_axes(ctx, inputs, attrs, op_type):
    ndim = ctx.ndim(inputs[0])
    if ctx.opset >= _AXES_AS_INPUT.get(op_type, 18):
        axes = inputs[1] if len(inputs) > 1 else None
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
    axes = _reduce_axes(ctx, inputs, attrs, op)
    keep = bool(attrs.get("keepdims", 1))
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


@converter("CumSum")
def _cumsum(ctx, inputs, attrs):
    x = ctx.tensor(inputs[0])
    axis = normalize_axis(int(ctx.constant(inputs[1], "CumSum's axis").reshape(())),
                          ctx.ndim(x))
    backward = bool(attrs.get("reverse", 0))
    if backward:
        x = reverse(ctx, x, axis)
    out = ctx.emit(statistical.cumsum(x, axis=axis, exclusive=bool(attrs.get("exclusive",
                                                                            0))))
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
