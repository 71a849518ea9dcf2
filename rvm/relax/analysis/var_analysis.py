"""Variable queries: free, bound, used and all Relax variables, and referenced GlobalVars.

Every pass and the VM codegen ask these; "which variables are used" is
computed here only.

>>> from rvm.relax.expr import Tuple, Var
>>> x, y = Var("x"), Var("y")
>>> [v.name_hint for v in free_vars(Tuple([x, y, x]))]
['x', 'y']
"""
from rvm.ir.expr import GlobalVar
from rvm.relax.expr_functor import ExprVisitor


class _VarCollector(ExprVisitor):
    def __init__(self):
        self.bound = {}
        self.used = {}
        self.gvars = {}

    def visit_var_def(self, var):
        self.bound.setdefault(id(var), var)

    def visit_var_(self, var):
        self.used.setdefault(id(var), var)

    def visit_relax_expr_(self, expr):
        if isinstance(expr, GlobalVar):
            self.gvars.setdefault(expr.name_hint, expr)


def _collect(expr):
    collector = _VarCollector()
    collector.visit_expr(expr)
    return collector


def free_vars(expr):
    """Variables used in ``expr`` but not bound inside it, in order of first use."""
    c = _collect(expr)
    return [v for k, v in c.used.items() if k not in c.bound]


def used_vars(expr):
    """Variables read in ``expr`` (anywhere but on a binding's left side, nested branches and
    functions included), each once, in order of first use.

    >>> from rvm.relax.binding import BindingBlock, SeqExpr, VarBinding
    >>> from rvm.relax.expr import Var
    >>> x, z = Var("x"), Var("z")
    >>> [v.name_hint for v in used_vars(SeqExpr([BindingBlock([VarBinding(z, x)])], z))]
    ['x', 'z']
    """
    return list(_collect(expr).used.values())


def bound_vars(expr):
    """Variables bound inside ``expr`` (parameters and bindings), in order."""
    return list(_collect(expr).bound.values())


def all_vars(expr):
    """Every variable bound or used in ``expr``, bound ones first."""
    c = _collect(expr)
    merged = dict(c.bound)
    for k, v in c.used.items():
        merged.setdefault(k, v)
    return list(merged.values())


def all_global_vars(expr):
    """The GlobalVars referenced by ``expr`` (call_tir callees included), one per name."""
    return list(_collect(expr).gvars.values())


class _BindingCollector(ExprVisitor):
    def __init__(self):
        self.values = {}

    def visit_var_binding_(self, binding):
        self.values[binding.var] = binding.value
        super().visit_var_binding_(binding)


def get_var2val(expr):
    """{variable: bound value} for every VarBinding inside ``expr`` (a function or a SeqExpr).

    >>> from rvm.relax.binding import BindingBlock, SeqExpr, VarBinding
    >>> from rvm.relax.expr import Var
    >>> x, z = Var("x"), Var("z")
    >>> [(k.name_hint, v.name_hint) for k, v in get_var2val(
    ...     SeqExpr([BindingBlock([VarBinding(z, x)])], z)).items()]
    [('z', 'x')]
    """
    collector = _BindingCollector()
    collector.visit_expr(expr)
    return collector.values
