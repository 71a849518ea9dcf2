"""Elementwise binary operators with numpy broadcasting: arithmetic, comparisons and logical
operators. Operands have equal dtypes; a Python scalar becomes a constant of the other
operand's dtype. A scalar ``R.Prim`` operand counts as a 0-d tensor of its dtype (two of
them give an ``R.Prim``).

>>> from rvm.relax.expr import Var
>>> from rvm.relax.struct_info import TensorStructInfo
>>> x = Var("x", TensorStructInfo((2, 3), "float32"))
>>> add(x, x).op.name
'relax.add'
"""
from rvm.ir.expr import RelaxExpr
from rvm.relax.expr import Call, const
from rvm.relax.op.infer_util import broadcast_sinfo, check_arity, tensor_arg, unify_dtype
from rvm.relax.op.registry import Op, register_op
from rvm.relax.struct_info import PrimStructInfo, TensorStructInfo


def _operand(value, other, op_name):
    if isinstance(value, RelaxExpr):
        return value
    if isinstance(value, (bool, int, float)):
        sinfo = other.struct_info_ if isinstance(other, RelaxExpr) else None
        dtype = sinfo.dtype if isinstance(sinfo, TensorStructInfo) else None
        return const(value, dtype)
    raise TypeError(f"{op_name}: operands must be Relax expressions or scalars, got "
                    f"{type(value).__name__}")


def _tensor_or_prim(call, index, op_name, name):
    sinfo = call.args[index].struct_info_
    if isinstance(sinfo, PrimStructInfo):
        return TensorStructInfo((), sinfo.dtype)
    return tensor_arg(call, index, op_name, name)


def _make(name, doc, compare=False, logical=False):
    op_name = f"relax.{name}"

    def infer(call, ctx):
        check_arity(call, 2, op_name)
        prims = [a.struct_info_ for a in call.args
                 if isinstance(a.struct_info_, PrimStructInfo)]
        if len(prims) == 2:
            dtype = unify_dtype(prims[0].dtype, prims[1].dtype, op_name)
            return PrimStructInfo("bool" if compare else dtype)
        lhs, rhs = _tensor_or_prim(call, 0, op_name, "x1"), _tensor_or_prim(call, 1, op_name,
                                                                            "x2")
        if logical:
            for arg, sinfo in (("x1", lhs), ("x2", rhs)):
                if sinfo.dtype is not None and not sinfo.dtype.is_bool:
                    raise ValueError(f"{op_name} expects bool tensors, got {sinfo.dtype} for "
                                     f"'{arg}'")
        out = broadcast_sinfo(lhs, rhs, op_name)
        if compare:
            out = TensorStructInfo(out.shape, "bool", out.ndim if out.shape is None else -1)
        return out

    register_op(op_name, infer, description=doc, attrs={})

    def build(x1, x2):
        x1, x2 = _operand(x1, x2, op_name), _operand(x2, x1, op_name)
        return Call(Op.get(op_name), [x1, x2])

    build.__name__ = build.__qualname__ = name
    build.__doc__ = f"{doc} (``{op_name}``; numpy broadcasting)."
    return build


add = _make("add", "Elementwise x1 + x2")
subtract = _make("subtract", "Elementwise x1 - x2")
multiply = _make("multiply", "Elementwise x1 * x2")
divide = _make("divide", "Elementwise x1 / x2")
floor_divide = _make("floor_divide", "Elementwise floor(x1 / x2)")
power = _make("power", "Elementwise x1 ** x2")
mod = _make("mod", "Elementwise x1 % x2 with the sign of x1 (C's fmod)")
floor_mod = _make("floor_mod", "Elementwise x1 - floor(x1 / x2) * x2 (numpy's %)")
maximum = _make("maximum", "Elementwise max(x1, x2)")
minimum = _make("minimum", "Elementwise min(x1, x2)")
equal = _make("equal", "Elementwise x1 == x2, a bool tensor", compare=True)
not_equal = _make("not_equal", "Elementwise x1 != x2, a bool tensor", compare=True)
less = _make("less", "Elementwise x1 < x2, a bool tensor", compare=True)
less_equal = _make("less_equal", "Elementwise x1 <= x2, a bool tensor", compare=True)
greater = _make("greater", "Elementwise x1 > x2, a bool tensor", compare=True)
greater_equal = _make("greater_equal", "Elementwise x1 >= x2, a bool tensor", compare=True)
logical_and = _make("logical_and", "Elementwise x1 and x2 of bool tensors", logical=True)
logical_or = _make("logical_or", "Elementwise x1 or x2 of bool tensors", logical=True)
logical_xor = _make("logical_xor", "Elementwise x1 xor x2 of bool tensors", logical=True)
