"""Small helpers shared by the lowering passes: binding constructors and use collection."""
from rvm.ir.module import IRModule
from rvm.relax.binding import VarBinding
from rvm.relax.expr import Var
from rvm.relax.expr_functor import ExprVisitor
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


class _Uses(ExprVisitor):
    def __init__(self):
        self.used = {}

    def visit_var_(self, var):
        self.used.setdefault(id(var), var)


def used_vars(expr):
    """The variables used in ``expr`` (nested branches included), each once, in order."""
    collector = _Uses()
    collector.visit_expr(expr)
    return list(collector.used.values())
