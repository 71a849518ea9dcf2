"""The legalization table: operator name -> ``rule(bb, call) -> Expr``.

A rule returns the replacement of a (normalized) call, usually
``bb.call_te(topi_fn, *args)``, which adds the kernel to the module
(reusing a structurally equal one). Returning the call unchanged leaves the
operator in place (a shape the kernel cannot be built for, for instance).
"""
from rvm.relax.expr import Constant
from rvm.relax.struct_info import PrimStructInfo
from rvm.relax.op.registry import attr_value
from rvm.tir import op as tir_op

LEGALIZE_RULES = {}


def register_legalize(op_name):
    """Decorator: registers ``fn(bb, call) -> Expr`` as the legalization of ``op_name``."""

    def register(fn):
        LEGALIZE_RULES[op_name] = fn
        return fn

    return register


def scalar_constants(args):
    """``args`` with each scalar (0-d) constant as a TIR constant, which a kernel inlines
    instead of reading it from a tensor argument (as TVM's legalization does), as long as one
    tensor argument remains (an all-constant call is FoldConstant's). For rules whose compute
    takes scalar operands. A scalar ``R.Prim`` of known value (``R.prim_value(1.5)``, a
    parameter ``R.Prim(value=n)``) is inlined the same way."""
    scalars = [_scalar_of(a) for a in args]
    if all(s is not None for s in scalars):
        return list(args)
    return [a if s is None else s for a, s in zip(args, scalars)]


def _scalar_of(expr):
    sinfo = expr.struct_info_
    if isinstance(sinfo, PrimStructInfo) and sinfo.value is not None:
        return sinfo.value  # R.prim_value(1.5), or a parameter R.Prim(value=n): n
    if not isinstance(expr, Constant) or expr.data.ndim != 0:
        return None
    dtype = expr.data.dtype
    if dtype.lanes != 1 or dtype.is_handle:
        return None
    return tir_op.const(expr.data.numpy().item(), dtype)


def te_rule(op_name, topi_fn, scalars=False, **fixed):
    """Registers ``call_te(topi_fn, *call.args, **fixed)`` as the rule of ``op_name``; the
    kernel is named after the operator. With ``scalars``, scalar constant arguments are
    inlined (``scalar_constants``)."""

    def rule(bb, call):
        args = scalar_constants(call.args) if scalars else call.args
        return bb.call_te(topi_fn, *args, primfunc_name_hint=op_name.split(".")[-1], **fixed)

    LEGALIZE_RULES[op_name] = rule
    return rule


attr = attr_value  # the attribute of a call, or the operator's declared default


def kernel_name(call):
    """The kernel name hint for a call: the operator's last name component."""
    return call.op.name.split(".")[-1]
