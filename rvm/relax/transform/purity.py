"""Whether evaluating a Relax expression may have visible side effects."""
from rvm.ir.expr import GlobalVar
from rvm.relax.expr import Call, ExternFunc, If
from rvm.relax.function import Function
from rvm.relax.op.registry import Op
from rvm.relax.struct_info import FuncStructInfo


def is_pure_call(call, mod=None):
    """Whether ``call`` has no visible side effects.

    Operators say so themselves (``FPurity``); a GlobalVar is pure when it
    names a pure Relax function of ``mod``; ExternFuncs (packed functions and
    kernels) and anything unknown are impure.
    """
    op = call.op
    if isinstance(op, Op):
        return op.purity
    if isinstance(op, ExternFunc):
        return False
    if isinstance(op, GlobalVar):
        func = mod[op.name_hint] if mod is not None and op.name_hint in mod else None
        if isinstance(func, Function):
            return func.is_pure
        return False
    sinfo = op.struct_info_
    return isinstance(sinfo, FuncStructInfo) and sinfo.purity


def is_pure_value(value, mod=None):
    """Whether binding ``value`` can be dropped when its variable is unused."""
    if isinstance(value, Call):
        return is_pure_call(value, mod)
    return not isinstance(value, If)
