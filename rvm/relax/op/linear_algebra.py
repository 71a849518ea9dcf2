"""Linear algebra operators: matmul with numpy semantics (batch broadcasting, 1-D operands)
and linear.

>>> from rvm.relax.expr import Var
>>> from rvm.relax.struct_info import TensorStructInfo
>>> matmul(Var("a", TensorStructInfo((2, 3), "float32")),
...        Var("b", TensorStructInfo((3, 4), "float32"))).op.name
'relax.matmul'
"""
from rvm.relax.expr import Call
from rvm.relax.op.binary import add
from rvm.relax.op.infer_util import (
    broadcast_shapes,
    check_arity,
    dim_value,
    same_dim,
    tensor_arg,
    unify_dtype,
)
from rvm.relax.op.manipulate import permute_dims
from rvm.relax.op.registry import Op, composite, register_op
from rvm.relax.struct_info import TensorStructInfo


def _infer_matmul(call, ctx):
    name = "relax.matmul"
    check_arity(call, 2, name)
    a, b = tensor_arg(call, 0, name), tensor_arg(call, 1, name)
    out_dtype = (call.attrs or {}).get("out_dtype")
    dtype = out_dtype if out_dtype is not None else unify_dtype(a.dtype, b.dtype, name)
    for side, s in (("lhs", a), ("rhs", b)):
        if s.ndim == 0:
            raise ValueError(f"{name}: the {side} operand must have rank >= 1, got a scalar")
    av, bv = a.shape_values, b.shape_values
    if av is None or bv is None:
        return TensorStructInfo(None, dtype, _result_ndim(a.ndim, b.ndim))
    a_batch, (m, k_a) = (av[:-2], av[-2:]) if len(av) > 1 else ((), (None, av[0]))
    b_batch, (k_b, n) = (bv[:-2], bv[-2:]) if len(bv) > 1 else ((), (bv[0], None))
    if not same_dim(k_a, k_b) and dim_value(k_a) is not None and dim_value(k_b) is not None:
        raise ValueError(f"{name}: reduction dimensions differ, {dim_value(k_a)} vs "
                         f"{dim_value(k_b)} (shapes {[dim_value(d) for d in av]} and "
                         f"{[dim_value(d) for d in bv]})")
    batch = broadcast_shapes(a_batch, b_batch, name)
    tail = [d for d in (m, n) if d is not None]
    if batch is None:
        return TensorStructInfo(None, dtype, max(len(a_batch), len(b_batch)) + len(tail))
    return TensorStructInfo(list(batch) + tail, dtype)


def _result_ndim(a_ndim, b_ndim):
    if a_ndim == -1 or b_ndim == -1:
        return -1
    if a_ndim == 1 and b_ndim == 1:
        return 0
    if a_ndim == 1 or b_ndim == 1:
        return max(a_ndim, b_ndim) - 1
    return max(a_ndim, b_ndim)


register_op("relax.matmul", _infer_matmul, description="matrix product (numpy matmul)",
            attrs={"out_dtype": None})


def matmul(x1, x2, out_dtype=None):
    """The matrix product of ``x1`` and ``x2`` with numpy's matmul rules (``relax.matmul``)."""
    attrs = {"out_dtype": out_dtype} if out_dtype is not None else None
    return Call(Op.get("relax.matmul"), [x1, x2], attrs=attrs)


@composite
def linear(data, weight, bias=None, out_dtype=None):
    """``data @ weight.T + bias``, as TVM builds it: ``matmul(data, permute_dims(weight))``
    plus ``add`` when ``bias`` is given (not an operator of its own).

    >>> from rvm.relax.expr import Var
    >>> x = Var("x", TensorStructInfo((2, 3), "float32"))
    >>> w = Var("w", TensorStructInfo((4, 3), "float32"))
    >>> linear(x, w).args[1].op.name
    'relax.permute_dims'
    """
    result = matmul(data, permute_dims(weight), out_dtype=out_dtype)
    return result if bias is None else add(result, bias)
