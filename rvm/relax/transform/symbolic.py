"""Substituting symbolic shape variables throughout a Relax function.

``SymbolicBinder`` replaces TIR variables (``n`` in ``R.Tensor((n, 4))``) by
PrimExprs everywhere they occur: variable struct info, shape and prim values,
call struct-info arguments and attributes (``end=[n]`` of a strided slice),
match_cast targets and the return struct info.
Results are simplified, so binding ``n`` to 128 turns ``n * 2`` into ``256``.
"""
from rvm.ir.expr import PrimExpr
from rvm.relax.binding import MatchCast
from rvm.relax.expr import Call, DataflowVar, PrimValue, ShapeExpr, Var
from rvm.relax.expr_functor import ExprMutator
from rvm.relax.function import Function
from rvm.relax.struct_info import (
    FuncStructInfo,
    PrimStructInfo,
    ShapeStructInfo,
    TensorStructInfo,
    TupleStructInfo,
)
from rvm.tir.arith import simplify
from rvm.tir.stmt_functor import substitute


def substitute_prim(expr, mapping):
    """``expr`` with TIR variables replaced (``mapping``: id(var) -> PrimExpr), simplified."""
    new = substitute(expr, lambda var: mapping.get(id(var)))
    return expr if new is expr else simplify(new)


def _values(values, mapping):
    new = tuple(substitute_prim(v, mapping) for v in values)
    return values if all(a is b for a, b in zip(new, values)) else new


def _attr_value(value, mapping):
    if isinstance(value, PrimExpr):
        return substitute_prim(value, mapping)
    if isinstance(value, (list, tuple)):
        new = [_attr_value(v, mapping) for v in value]
        return value if all(a is b for a, b in zip(new, value)) else type(value)(new)
    return value


def substitute_attrs(attrs, mapping):
    """A call's ``attrs`` (a dict) with TIR variables replaced; the same object when nothing
    changed."""
    if not mapping or not attrs:
        return attrs
    new = {key: _attr_value(value, mapping) for key, value in attrs.items()}
    return attrs if all(new[k] is v for k, v in attrs.items()) else new


def substitute_struct_info(sinfo, mapping):
    """``sinfo`` with TIR variables replaced; the same object when nothing changed."""
    if not mapping or sinfo is None:
        return sinfo
    if isinstance(sinfo, TensorStructInfo):
        if isinstance(sinfo.shape, ShapeExpr):
            values = _values(sinfo.shape.values, mapping)
            if values is not sinfo.shape.values:
                return TensorStructInfo(ShapeExpr(values), sinfo.dtype)
        return sinfo
    if isinstance(sinfo, ShapeStructInfo):
        if sinfo.values is not None:
            values = _values(sinfo.values, mapping)
            if values is not sinfo.values:
                return ShapeStructInfo(values)
        return sinfo
    if isinstance(sinfo, PrimStructInfo):
        if sinfo.value is not None:
            value = substitute_prim(sinfo.value, mapping)
            if value is not sinfo.value:
                return PrimStructInfo(value=value)
        return sinfo
    if isinstance(sinfo, TupleStructInfo):
        fields = [substitute_struct_info(f, mapping) for f in sinfo.fields]
        if all(a is b for a, b in zip(fields, sinfo.fields)):
            return sinfo
        return TupleStructInfo(fields)
    if isinstance(sinfo, FuncStructInfo):
        params = sinfo.params
        if params is not None:
            params = [substitute_struct_info(p, mapping) for p in params]
            if all(a is b for a, b in zip(params, sinfo.params)):
                params = sinfo.params
        ret = substitute_struct_info(sinfo.ret, mapping)
        if params is sinfo.params and ret is sinfo.ret:
            return sinfo
        return FuncStructInfo(params, ret, sinfo.purity)
    return sinfo


class SymbolicBinder(ExprMutator):
    """Rewrites a function with symbolic variables replaced (``mapping``: id(var) -> PrimExpr).

    Relax variables may also be replaced by expressions through ``set_var_remap``
    before calling ``bind_function``.
    """

    def __init__(self, mapping, mod=None):
        super().__init__(mod)
        self.mapping = mapping

    def visit_var_def(self, var):
        sinfo = substitute_struct_info(var.struct_info_, self.mapping)
        if sinfo is var.struct_info_:
            return var
        new = (DataflowVar if isinstance(var, DataflowVar) else Var)(var.name_hint, sinfo,
                                                                     var.span)
        self.set_var_remap(var, new)
        return new

    def visit_relax_expr_(self, expr):
        if isinstance(expr, ShapeExpr):
            values = _values(expr.values, self.mapping)
            return expr if values is expr.values else ShapeExpr(values, expr.span)
        if isinstance(expr, PrimValue) and isinstance(expr.value, PrimExpr):
            value = substitute_prim(expr.value, self.mapping)
            return expr if value is expr.value else PrimValue(value, expr.span)
        return expr

    def visit_call_(self, call):
        new = super().visit_call_(call)
        sinfo_args = [substitute_struct_info(s, self.mapping) for s in new.sinfo_args]
        attrs = substitute_attrs(new.attrs, self.mapping)
        if attrs is new.attrs and all(a is b for a, b in zip(sinfo_args, new.sinfo_args)):
            return new
        return Call(new.op, new.args, attrs, sinfo_args, new.span)

    def visit_match_cast_(self, binding):
        value = self.visit_expr(binding.value)
        var = self.visit_var_def(binding.var)
        sinfo = substitute_struct_info(binding.struct_info, self.mapping)
        if var is binding.var and value is binding.value and sinfo is binding.struct_info:
            self.builder.emit_normalized(binding)
        else:
            self.builder.emit_normalized(MatchCast(var, value, sinfo, binding.span))

    def bind_function(self, func, params):
        """``func`` rewritten, with ``params`` (a subset of its parameters) as the new ones."""
        new_params = [self.visit_var_def(p) for p in params]
        body = self.visit_with_new_scope(func.body)
        ret = substitute_struct_info(func.ret_struct_info, self.mapping)
        return Function(new_params, body, ret, func.is_pure, func.attrs, func.span)
