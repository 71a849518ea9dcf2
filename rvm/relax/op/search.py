"""Selecting and searching: ``where`` (elementwise choice) and ``argmax``/``argmin``.

>>> from rvm.relax.expr import Var
>>> from rvm.relax.struct_info import TensorStructInfo
>>> argmax(Var("x", TensorStructInfo((2, 3), "float32")), axis=1).attrs
{'axis': 1, 'keepdims': False}
"""
from rvm.relax.expr import Call
from rvm.relax.op.attrs import bool_attr, int_attr
from rvm.relax.op.infer_util import (
    attr,
    broadcast_sinfo,
    check_arity,
    tensor_arg,
    unify_dtype,
)
from rvm.relax.op.registry import Op, register_op
from rvm.relax.op.statistical import reduced_sinfo
from rvm.relax.struct_info import TensorStructInfo


def _infer_where(call, ctx):
    name = "relax.where"
    check_arity(call, 3, name)
    cond = tensor_arg(call, 0, name, "condition")
    x1, x2 = tensor_arg(call, 1, name, "x1"), tensor_arg(call, 2, name, "x2")
    if cond.dtype is not None and not cond.dtype.is_bool:
        raise ValueError(f"{name}: argument 'condition' must be a bool tensor, got {cond.dtype}")
    dtype = unify_dtype(x1.dtype, x2.dtype, name)
    values = broadcast_sinfo(x1, x2, name, dtype="bool")  # the shape only; dtype set below
    out = broadcast_sinfo(cond, values, name, dtype="bool")
    return TensorStructInfo(out.shape, dtype, out.ndim if out.shape is None else -1)


register_op("relax.where", _infer_where, description="elementwise choice between two tensors",
            attrs={})


def where(condition, x1, x2):
    """``x1`` where the bool tensor ``condition`` holds, else ``x2``; the three broadcast
    together (``relax.where``)."""
    return Call(Op.get("relax.where"), [condition, x1, x2])


def _make_arg(name, doc):
    op_name = f"relax.{name}"

    def infer(call, ctx):
        check_arity(call, 1, op_name)
        sinfo = tensor_arg(call, 0, op_name, "x")
        axis = attr(call, "axis")
        return reduced_sinfo(sinfo, None if axis is None else (axis,),
                             attr(call, "keepdims", False), op_name, dtype="int64")

    register_op(op_name, infer, description=doc, attrs={"axis": None, "keepdims": False})

    def build(x, axis=None, keepdims=False):
        axis = None if axis is None else int_attr(axis, op_name, "axis")
        return Call(Op.get(op_name), [x], attrs={
            "axis": axis, "keepdims": bool_attr(keepdims, op_name, "keepdims")})

    build.__name__ = build.__qualname__ = name
    build.__doc__ = (f"{doc} along ``axis`` (None: of the flattened tensor), as int64; "
                     f"``keepdims`` keeps the reduced axes as size 1 (``{op_name}``).")
    return build


argmax = _make_arg("argmax", "The index of the first maximum")
argmin = _make_arg("argmin", "The index of the first minimum")
