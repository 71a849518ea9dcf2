"""Small helpers shared by the lowering passes: binding constructors."""
from rvm.ir.module import IRModule
from rvm.relax.binding import VarBinding
from rvm.relax.expr import Var
from rvm.relax.normalizer import Normalizer

_NORMALIZER = Normalizer(IRModule(), check_global_vars=False)


def normalized(expr):
    """``expr`` with struct info filled in (its arguments must already be leaves)."""
    return _NORMALIZER.normalize(expr)


def bind(name, expr):
    """A VarBinding of ``expr`` (normalized) to a new Var named ``name``; returns (var, binding)."""
    expr = normalized(expr)
    var = Var(name, expr.struct_info_)
    return var, VarBinding(var, expr)
