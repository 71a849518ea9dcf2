"""Building tensor expressions: placeholder, compute, reduce_axis, reductions, extern."""
import inspect

from rvm.ir.expr import PrimExpr
from rvm.tir import op as _op
from rvm.tir.buffer import decl_buffer
from rvm.tir.expr import IterVar, Range, Reduce, SizeVar, Var
from rvm.tir.stmt import Evaluate, Stmt
from rvm.tir.stmt_functor import post_order_visit
from rvm.te.tensor import ComputeOp, ExternOp, PlaceholderOp, Tensor, convert_shape


def placeholder(shape, dtype="float32", name="placeholder"):
    """An input tensor of ``shape`` and ``dtype``.

    >>> A = placeholder((128, 128), name="A")
    >>> A.shape[0].value, str(A.dtype)
    (128, 'float32')
    """
    return PlaceholderOp(name, shape, dtype).outputs[0]


def var(name="tindex", dtype="int32"):
    """A scalar variable (a symbolic dimension or parameter)."""
    return Var(name, dtype)


def size_var(name="size", dtype="int32"):
    """A non-negative scalar variable (a tensor dimension)."""
    return SizeVar(name, dtype)


def reduce_axis(dom, name="rv"):
    """A reduction axis over ``dom``: a Range or a ``(begin, end)`` pair.

    >>> k = reduce_axis((0, 16), name="k")
    >>> k.var.name_hint, k.dom.extent.value
    ('k', 16)
    """
    if not isinstance(dom, Range):
        dom = Range(*dom) if isinstance(dom, (tuple, list)) else Range(dom)
    return IterVar(dom, Var(name, dom.extent.dtype), IterVar.CommReduce)


def _axis_names(fcompute, ndim):
    try:
        params = list(inspect.signature(fcompute).parameters.values())
    except (TypeError, ValueError):
        params = []
    if params and params[0].kind == inspect.Parameter.VAR_POSITIONAL:
        return [f"i{k}" for k in range(ndim)]
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(names) != ndim:
        raise ValueError(f"compute: the function takes {len(names)} index arguments but the "
                         f"shape has {ndim} dimensions")
    return names


def compute(shape, fcompute, name="compute", tag="", attrs=None):
    """The tensor ``T[i, ...] = fcompute(i, ...)`` over ``shape``.

    ``fcompute`` may return a reduction (``te.sum(..., axis=k)``) as its
    whole result. Axis variables are named after fcompute's parameters.

    >>> A = placeholder((4, 4), name="A")
    >>> B = compute(A.shape, lambda i, j: A[i, j] * 2, name="B")
    >>> B.op.axis[1].var.name_hint
    'j'
    """
    shape = convert_shape(shape)
    names = _axis_names(fcompute, len(shape))
    axis = [IterVar(Range.from_min_extent(_op.const(0, d.dtype), d), Var(n, d.dtype),
                    IterVar.DataPar) for n, d in zip(names, shape)]
    body = fcompute(*[iv.var for iv in axis])
    if isinstance(body, (list, tuple)):
        raise ValueError(f"compute {name!r}: expected one expression, got {len(body)}; "
                         "multi-output compute is not supported")
    body = _op.convert(body)
    if not isinstance(body, Reduce) and _contains_reduce(body):
        raise ValueError(f"compute {name!r}: a reduction must be the whole body, got {body!r}")
    return ComputeOp(name, tag, attrs, axis, [body]).outputs[0]


def _contains_reduce(expr):
    found = []
    post_order_visit(expr, lambda n: found.append(n) if isinstance(n, Reduce) else None)
    return bool(found)


def _reducer(combiner, identity, binary):
    def reduce(expr, axis=None, where=None, init=None):
        if axis is None or isinstance(axis, PrimExpr) or isinstance(axis, (int, float)):
            if axis is None:
                raise TypeError(f"te.{combiner} needs an axis (reduction) or two operands")
            return binary(expr, axis)
        axes = [axis] if isinstance(axis, IterVar) else list(axis)
        for a in axes:
            if not isinstance(a, IterVar) or a.iter_type != IterVar.CommReduce:
                raise TypeError(f"te.{combiner}: axis must be reduce_axis IterVars, got {a!r}")
        expr = _op.convert(expr)
        cond = _op.const(True) if where is None else _op.convert(where)
        start = identity(expr.dtype) if init is None else _op.convert(init, expr.dtype)
        return Reduce(combiner, expr, axes, cond, start)

    reduce.__name__ = combiner
    reduce.__doc__ = (f"The {combiner} of ``expr`` over the reduction ``axis`` (optionally only "
                      f"where ``where`` holds); with two expressions, their elementwise "
                      f"{combiner}.")
    return reduce


sum = _reducer("sum", lambda dt: _op.const(0, dt), _op.add)  # noqa: A001  (TVM's name)
prod = _reducer("prod", lambda dt: _op.const(1, dt), _op.multiply)
max = _reducer("max", _op.min_value, _op.max)  # noqa: A001  (TVM's name)
min = _reducer("min", _op.max_value, _op.min)  # noqa: A001  (TVM's name)


def _is_shape_list(shape):
    return isinstance(shape, (list, tuple)) and len(shape) > 0 and \
        isinstance(shape[0], (list, tuple))


def extern(shape, inputs, fcompute, name="extern", dtype=None, in_buffers=None,
           out_buffers=None, tag="", attrs=None):
    """Tensors computed by an opaque statement: ``fcompute(ins, outs)`` gets the input and
    output Buffers and returns a Stmt or an expression (e.g. ``tir.call_packed``).

    >>> from rvm.tir.op import call_packed
    >>> A = placeholder((4,), name="A")
    >>> C = extern(A.shape, [A], lambda ins, outs: call_packed("env.copy", ins[0], outs[0]),
    ...            name="C")
    >>> C.shape[0].value
    4
    """
    shapes = list(shape) if _is_shape_list(shape) else [shape]
    inputs = list(inputs)
    if dtype is None:
        if not inputs:
            raise ValueError("extern: dtype is required when there are no inputs")
        dtype = inputs[0].dtype
    dtypes = list(dtype) if isinstance(dtype, (list, tuple)) else [dtype] * len(shapes)
    if in_buffers is None:
        in_buffers = [decl_buffer(t.shape, t.dtype, name=t.name) for t in inputs]
    if out_buffers is None:
        out_buffers = [decl_buffer(convert_shape(s), d, name=name)
                       for s, d in zip(shapes, dtypes)]
    for t in inputs:
        if not isinstance(t, Tensor):
            raise TypeError(f"extern {name!r}: inputs must be Tensors, got {t!r}")
    body = fcompute(list(in_buffers), list(out_buffers))
    if not isinstance(body, Stmt):
        body = Evaluate(_op.convert(body))
    op = ExternOp(name, tag, attrs, inputs, in_buffers, out_buffers, body)
    return op.outputs[0] if len(op.outputs) == 1 else list(op.outputs)
