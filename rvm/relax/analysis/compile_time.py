"""Queries TVM's ``relax.analysis`` answers about when values are known and what calls do:
``contains_impure_call`` and ``computable_at_compile_time``.

>>> from rvm.script import relax as R
>>> @R.function
... def f(A: R.Tensor([4], "int32"), B: R.Tensor([4], "int32")):
...     R.func_attr({"num_input": 1})
...     C = R.add(B, B)
...     return R.add(A, C)
>>> [v.name_hint for v in computable_at_compile_time(f)], contains_impure_call(f)
(['B', 'C'], False)
"""
from rvm.ir.expr import GlobalVar
from rvm.relax.analysis.struct_info_analysis import collect_tir_vars, definable_tir_vars
from rvm.relax.analysis.var_analysis import free_vars
from rvm.relax.binding import MatchCast
from rvm.relax.expr import Var
from rvm.relax.expr_functor import ExprVisitor
from rvm.relax.function import Function
from rvm.relax.op.registry import Op
from rvm.relax.struct_info import FuncStructInfo


class _ImpureCallFinder(ExprVisitor):
    def __init__(self, own_name):
        self.own_name = own_name
        self.found = False

    def visit_function_(self, func):
        pass  # defining a nested function calls nothing

    def visit_call_(self, call):
        op = call.op
        if self.own_name is not None and (op is self.own_name or (
                isinstance(op, GlobalVar) and isinstance(self.own_name, GlobalVar)
                and op.name_hint == self.own_name.name_hint)):
            pass  # the function's own recursive call, ignored on request
        elif isinstance(op, Op):
            self.found |= not op.purity
        else:
            sinfo = op.struct_info_
            self.found |= not (isinstance(sinfo, FuncStructInfo) and sinfo.purity)
        super().visit_call_(call)


def contains_impure_call(expr, own_name=None):
    """Whether evaluating ``expr`` (a Function: its body) makes a call with visible side
    effects: an impure operator (``R.print``, ``R.call_packed``), or a callee whose struct
    info says it is impure. Functions defined inside are not calls and do not count; a call
    of ``own_name`` (a GlobalVar or Var: the function's own name) is ignored, so a recursive
    function is judged by its other calls."""
    finder = _ImpureCallFinder(own_name)
    finder.visit_expr(expr.body if isinstance(expr, Function) else expr)
    return finder.found


def _bindings(func):
    for block in func.body.blocks:
        yield from block.bindings


def computable_at_compile_time(func):
    """The variables of ``func`` whose values are known at compile time, in order: the
    parameters after its ``num_input`` attribute (weights), then every binding that uses
    only those variables and symbolic variables they define. Without ``num_input`` every
    parameter is a run-time input and the list is empty."""
    if not isinstance(func, Function):
        raise TypeError(f"computable_at_compile_time expects a relax Function, got "
                        f"{type(func).__name__}")
    num_input = (func.attrs or {}).get("num_input")
    if num_input is None:
        return []
    num_input = int(num_input)
    known = list(func.params[num_input:])
    known_ids = {id(v) for v in known}
    tir_ids = {id(v) for p in known for v in definable_tir_vars(p.struct_info_)}
    for binding in _bindings(func):
        value = binding.value
        uses = [v for v in free_vars(value) if isinstance(v, Var)]
        if not all(id(v) in known_ids for v in uses):
            continue
        sinfo = binding.var.struct_info_
        mentioned = collect_tir_vars(value) + collect_tir_vars(getattr(value, "struct_info_",
                                                                       None))
        if not isinstance(binding, MatchCast):
            mentioned += collect_tir_vars(sinfo)
        if not all(id(v) in tir_ids for v in mentioned):
            continue
        known.append(binding.var)
        known_ids.add(id(binding.var))
        if isinstance(binding, MatchCast):
            tir_ids.update(id(v) for v in definable_tir_vars(binding.struct_info))
    return known
