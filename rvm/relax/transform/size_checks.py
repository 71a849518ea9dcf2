"""The checks VMShapeLower adds where it computes a tensor dimension from other values.

A dimension such as ``n - 5`` or ``k + 5`` can come out negative for some inputs.
Without a check, the first thing to notice would be an allocation (``alloc_storage:
size must be >= 0, got -20``) or a kernel, far from the shape that caused it. So right
after the shape function that computes such a dimension, ``vm.builtin.check_size``
refuses a negative value, naming the function, the dimension, the tensor whose shape
it is and the values of the variables it was computed from::

    zeros: dimension n - 5 of 'y' (float32[n - 5]) is -4 (n = 1), but a size must be >= 0

A dimension that cannot be negative (``n * 2``, ``n + 1`` where ``n`` is a size,
``max(n - 5, 0)``) gets no check.
"""
from rvm.relax.expr import Call, ExternFunc, PrimValue, StringImm, Var
from rvm.relax.expr_functor import ExprVisitor
from rvm.relax.struct_info import ObjectStructInfo, TensorStructInfo, TupleStructInfo
from rvm.tir.arith import Analyzer
from rvm.tir.expr import (
    Add, Cast, FloatImm, FloorDiv, FloorMod, IntImm, Max, Min, Mul, Range,
)
from rvm.tir.expr import Var as TirVar
from rvm.tir.expr_printer import dim_text
from rvm.relax.transform.lowering_util import bind
from rvm.relax.transform.shape_func import tir_vars_of
from rvm.relax.transform.sinfo_text import sinfo_text

_SIZE_RANGE = (0, 1 << 62)


class _TensorDims(ExprVisitor):
    """The first tensor (a binding's variable, shown under the name of the first variable
    that aliases it: ``y = alloc``) of each computed dimension."""

    def __init__(self):
        super().__init__()
        self.owners = []  # [(dim, var)] in order of definition
        self.alias = {}  # id(var) -> the first variable bound to it

    def add(self, var, sinfo):
        if isinstance(sinfo, TensorStructInfo):
            for dim in sinfo.shape_values or ():
                if not isinstance(dim, (TirVar, IntImm, FloatImm)):
                    self.owners.append((dim, var, sinfo))
        elif isinstance(sinfo, TupleStructInfo):
            for field in sinfo.fields:
                self.add(var, field)

    def visit_var_binding_(self, binding):
        super().visit_var_binding_(binding)
        if isinstance(binding.value, Var):
            self.alias.setdefault(id(binding.value), binding.var)

    def visit_var_def(self, var):
        super().visit_var_def(var)
        self.add(var, var.struct_info_)


def tensor_dim_owners(func):
    """[(dim, text naming its tensor, the tensor's sinfo)] for every computed dimension of
    the tensors of ``func``: parameters first, then bindings in order."""
    visitor = _TensorDims()
    for param in func.params:
        visitor.add(param, param.struct_info_)
    params = {id(p) for p in func.params}
    visitor.visit_expr(func.body)
    out = []
    for dim, var, sinfo in visitor.owners:
        shown = visitor.alias.get(id(var), var)
        name = f"parameter '{var.name_hint}'" if id(var) in params else f"'{shown.name_hint}'"
        out.append((dim, name, sinfo))
    return out


def _nonneg(expr, size_vars):
    """Whether ``expr`` is >= 0 by its form: sums, products, maxima ... of sizes."""
    if isinstance(expr, IntImm):
        return expr.value >= 0
    if isinstance(expr, TirVar):
        return id(expr) in size_vars
    if isinstance(expr, Cast):
        return _nonneg(expr.value, size_vars)
    if isinstance(expr, Max):
        return _nonneg(expr.a, size_vars) or _nonneg(expr.b, size_vars)
    if isinstance(expr, (Add, Mul, Min, FloorDiv, FloorMod)):
        return _nonneg(expr.a, size_vars) and _nonneg(expr.b, size_vars)
    return False


def may_be_negative(dim, size_vars):
    """Whether ``dim`` may be negative when the variables in ``size_vars`` (ids) are >= 0
    and the others are anything."""
    if _nonneg(dim, size_vars):
        return False
    ana = Analyzer()
    low, high = (IntImm("int64", v) for v in _SIZE_RANGE)
    for var in tir_vars_of(dim):
        if id(var) in size_vars:
            ana.bind(var, Range(low, high))
    lower = ana.const_int_bound(ana.simplify(dim))[0]
    return lower is None or lower < 0


def check_size_binding(func_name, dim, owner, sinfo, heap, slot, var_slots):
    """The binding of ``vm.builtin.check_size`` for the computed dimension ``dim`` in heap
    ``slot`` (module docstring); ``var_slots`` lists (variable, slot) of its variables."""
    ctx = f"{func_name}: dimension {dim_text(dim)} of {owner} ({sinfo_text(sinfo)})"
    args = [heap, PrimValue(slot), StringImm(ctx)]
    for var, var_slot in var_slots:
        args += [StringImm(var.name_hint), PrimValue(var_slot)]
    call = Call(ExternFunc("vm.builtin.check_size"), args)
    object.__setattr__(call, "struct_info_", ObjectStructInfo())
    return bind("_", call)[1]
