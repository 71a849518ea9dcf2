"""Reductions: sum, mean, max, min over axes, optionally keeping reduced axes as size 1.

>>> from rvm.relax.expr import Var
>>> from rvm.relax.struct_info import TensorStructInfo
>>> sum(Var("x", TensorStructInfo((2, 3), "float32")), axis=1).attrs
{'axis': (1,), 'keepdims': False}
"""

from rvm.relax.expr import Call
from rvm.relax.op.infer_util import check_arity, normalize_axis, tensor_arg
from rvm.relax.op.registry import Op, register_op
from rvm.relax.struct_info import TensorStructInfo
from rvm.tir.expr import IntImm


def _make(name, doc):
    op_name = f"relax.{name}"

    def infer(call, ctx):
        check_arity(call, 1, op_name)
        sinfo = tensor_arg(call, 0, op_name)
        attrs = call.attrs or {}
        axis, keepdims = attrs.get("axis"), attrs.get("keepdims", False)
        if sinfo.ndim == -1:
            return TensorStructInfo(None, sinfo.dtype)
        axes = range(sinfo.ndim) if axis is None else [
            normalize_axis(a, sinfo.ndim, op_name) for a in axis]
        axes = set(axes)
        if axis is not None and len(axes) != len(axis):
            raise ValueError(f"{op_name}: repeated axes in {list(axis)}")
        values = sinfo.shape_values
        if values is None:
            return TensorStructInfo(None, sinfo.dtype,
                                    sinfo.ndim if keepdims else sinfo.ndim - len(axes))
        out = []
        for i, d in enumerate(values):
            if i not in axes:
                out.append(d)
            elif keepdims:
                out.append(IntImm("int64", 1))
        return TensorStructInfo(out, sinfo.dtype)

    register_op(op_name, infer, description=doc)

    def build(x, axis=None, keepdims=False):
        if axis is not None:
            axis = (int(axis),) if isinstance(axis, int) else tuple(int(a) for a in axis)
        return Call(Op.get(op_name), [x], attrs={"axis": axis, "keepdims": bool(keepdims)})

    build.__name__ = build.__qualname__ = name
    build.__doc__ = (f"{doc} over ``axis`` (an int, a list, or None for all axes); "
                     f"``keepdims`` keeps them as size 1 (``{op_name}``).")
    return build


sum = _make("sum", "The sum")  # noqa: A001  (TVM's name)
mean = _make("mean", "The mean")
max = _make("max", "The maximum")  # noqa: A001  (TVM's name)
min = _make("min", "The minimum")  # noqa: A001  (TVM's name)
