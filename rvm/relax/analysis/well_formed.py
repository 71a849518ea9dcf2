"""Well-formedness of Relax functions and modules.

Checks, naming the function and the variable at fault:
- every variable is defined before use, and bound only once in the module;
- a DataflowVar is defined in a dataflow block and used only inside it;
- symbolic shape variables are defined (by a parameter's shape or a
  match_cast) before struct info uses them; inside a function's struct info
  (``R.Callable``) the variables its parameters define are its own;
- dataflow blocks hold no impure calls and no If; pure functions call no
  impure function;
- GlobalVars (call_tir callees included) name functions of the module;
- with ``check_struct_info``, every expression has struct info.
"""
from rvm.ir.expr import GlobalVar
from rvm.ir.module import IRModule
from rvm.relax.analysis.struct_info_analysis import collect_tir_vars, definable_tir_vars
from rvm.relax.binding import DataflowBlock, MatchCast, SeqExpr
from rvm.relax.expr import (
    Call,
    DataflowVar,
    ExternFunc,
    If,
    PrimValue,
    ShapeExpr,
    Tuple,
    TupleGetItem,
    Var,
)
from rvm.relax.function import Function
from rvm.relax.op.registry import Op
from rvm.relax.struct_info import FuncStructInfo, TupleStructInfo


def well_formed(obj, check_struct_info=True, raise_error=False):
    """Whether ``obj`` (an IRModule or a relax Function) is well formed.

    With ``raise_error``, a malformed input raises ValueError listing every
    problem found instead of returning False.

    >>> from rvm.relax.struct_info import TensorStructInfo
    >>> x = Var("x", TensorStructInfo((4,), "float32"))
    >>> well_formed(Function([x], SeqExpr([], x)))
    True
    """
    errors = well_formed_errors(obj, check_struct_info)
    if errors and raise_error:
        raise ValueError("malformed Relax IR:\n  " + "\n  ".join(errors))
    return not errors


def well_formed_errors(obj, check_struct_info=True):
    """The list of well-formedness problems of ``obj`` (empty when well formed)."""
    if isinstance(obj, IRModule):
        checker = _Checker(obj, check_struct_info)
        for gvar, func in obj.items():
            if isinstance(func, Function):
                symbol = func.get_attr("global_symbol")
                if symbol is not None and symbol != gvar.name_hint:
                    checker.error(f"{gvar.name_hint}: global_symbol '{symbol}' differs from the "
                                  f"function's name '{gvar.name_hint}'")
                checker.check_function(func, gvar.name_hint)
        return checker.errors
    if isinstance(obj, Function):
        checker = _Checker(None, check_struct_info)
        checker.check_function(obj, obj.get_attr("global_symbol") or "<function>")
        return checker.errors
    raise TypeError(f"well_formed expects an IRModule or a relax Function, got "
                    f"{type(obj).__name__}")


def _free_tir_vars(value):
    """collect_tir_vars of ``value`` without the variables a FuncStructInfo inside it binds
    through its parameters (TVM: a signature's symbolic variables are local to it)."""
    if isinstance(value, FuncStructInfo) and value.params is not None:
        own = {id(v) for p in value.params for v in definable_tir_vars(p)}
        parts, skip = [*value.params, value.ret], own
    elif isinstance(value, TupleStructInfo):
        parts, skip = value.fields, set()
    else:
        return collect_tir_vars(value)
    found = {}
    for part in parts:
        for tvar in _free_tir_vars(part):
            if id(tvar) not in skip:
                found.setdefault(id(tvar), tvar)
    return list(found.values())


def _var_kind(var):
    return "DataflowVar" if isinstance(var, DataflowVar) else "Var"


class _Checker:
    def __init__(self, mod, check_struct_info):
        self.mod = mod
        self.check_sinfo = check_struct_info
        self.errors = []
        self.func_name = None
        self.func_pure = True
        self.ever_defined = {}
        self.visible = [set()]
        self.dataflow_vars = None  # ids of DataflowVars of the current dataflow block
        self.tir_defined = [set()]
        self.binding_name = None

    def error(self, message):
        if message not in self.errors:
            self.errors.append(message)

    def fail(self, message):
        self.error(f"{self.func_name}: {message}")

    # -- scopes -------------------------------------------------------------------------
    def _is_visible(self, var):
        return any(id(var) in scope for scope in self.visible)

    def _tir_is_defined(self, tvar):
        return any(id(tvar) in scope for scope in self.tir_defined)

    def define_var(self, var, where):
        if id(var) in self.ever_defined:
            self.fail(f"{_var_kind(var)} '{var.name_hint}' is bound more than once ({where})")
        self.ever_defined[id(var)] = var
        self.visible[-1].add(id(var))
        if self.check_sinfo and var.struct_info_ is None:
            self.fail(f"{_var_kind(var)} '{var.name_hint}' has no struct info")
        self.check_tir_uses(var.struct_info_, f"the struct info of '{var.name_hint}'")

    def define_tir_vars(self, sinfo):
        for tvar in definable_tir_vars(sinfo):
            self.tir_defined[-1].add(id(tvar))

    def check_tir_uses(self, value, where):
        if value is None:
            return
        for tvar in _free_tir_vars(value):
            if not self._tir_is_defined(tvar):
                self.fail(f"symbolic variable '{tvar.name_hint}' used in {where} is not "
                          "defined; expected it in a parameter's shape or a match_cast")

    # -- functions, blocks, bindings ----------------------------------------------------
    def check_function(self, func, name):
        saved = (self.func_name, self.func_pure, self.dataflow_vars)
        # lowered code marks a function relax.force_pure when its impure calls are internal
        pure = func.is_pure and not func.get_attr("relax.force_pure", False)
        self.func_name, self.func_pure, self.dataflow_vars = name, pure, None
        self.visible.append(set())
        self.tir_defined.append(set())
        try:
            for param in func.params:
                if param.struct_info_ is not None:
                    self.define_tir_vars(param.struct_info_)
            for param in func.params:
                if isinstance(param, DataflowVar):
                    self.fail(f"parameter '{param.name_hint}' is a DataflowVar; expected a Var")
                self.define_var(param, "function parameter")
            if not isinstance(func.body, SeqExpr):
                self.fail(f"the body must be a SeqExpr, got {type(func.body).__name__}")
            self.visit(func.body)
            self.check_tir_uses(func.ret_struct_info, "the return struct info")
        finally:
            self.visible.pop()
            self.tir_defined.pop()
            self.func_name, self.func_pure, self.dataflow_vars = saved

    def visit_seq(self, seq):
        self.visible.append(set())
        self.tir_defined.append(set())
        try:
            for block in seq.blocks:
                self.visit_block(block)
            self.binding_name = None
            self.visit(seq.body)
        finally:
            self.visible.pop()
            self.tir_defined.pop()

    def visit_block(self, block):
        is_dataflow = isinstance(block, DataflowBlock)
        outer = self.dataflow_vars
        self.dataflow_vars = set() if is_dataflow else None
        try:
            for binding in block.bindings:
                var = binding.var
                self.binding_name = var.name_hint
                self.visit(binding.value)
                if isinstance(binding, MatchCast):
                    self.define_tir_vars(binding.struct_info)
                    self.check_tir_uses(binding.struct_info,
                                        f"the match_cast of '{var.name_hint}'")
                if isinstance(var, DataflowVar):
                    if not is_dataflow:
                        self.fail(f"DataflowVar '{var.name_hint}' is bound outside a dataflow "
                                  "block; expected a Var")
                    else:
                        self.dataflow_vars.add(id(var))
                self.define_var(var, "binding")
        finally:
            for var_id in self.dataflow_vars or ():
                self.visible[-1].discard(var_id)
            self.dataflow_vars = outer

    # -- expressions --------------------------------------------------------------------
    def visit(self, expr):
        if isinstance(expr, Var):
            self.visit_var(expr)
            return
        if self.check_sinfo and expr.struct_info_ is None and not isinstance(
                expr, (Op, GlobalVar)):
            self.fail(f"a {type(expr).__name__} has no struct info ({self._where()})")
        if isinstance(expr, GlobalVar):
            self.check_gvar(expr, "a reference")
        elif isinstance(expr, Call):
            self.visit_call(expr)
        elif isinstance(expr, (Tuple,)):
            for field in expr.fields:
                self.visit(field)
        elif isinstance(expr, TupleGetItem):
            self.visit(expr.tuple_value)
        elif isinstance(expr, (ShapeExpr, PrimValue)):
            self.check_tir_uses(expr, f"a {type(expr).__name__} ({self._where()})")
        elif isinstance(expr, SeqExpr):
            self.visit_seq(expr)
        elif isinstance(expr, If):
            self.visit_if(expr)
        elif isinstance(expr, Function):
            outer = self.binding_name
            self.check_function(expr, f"{self.func_name}.{outer or '<lambda>'}")
            self.binding_name = outer

    def _where(self):
        return f"in the binding of '{self.binding_name}'" if self.binding_name else "in the result"

    def visit_var(self, var):
        if self._is_visible(var):
            return
        kind = _var_kind(var)
        if id(var) in self.ever_defined:
            if isinstance(var, DataflowVar):
                self.fail(f"DataflowVar '{var.name_hint}' is used outside the dataflow block "
                          f"that defines it ({self._where()})")
            else:
                self.fail(f"{kind} '{var.name_hint}' is used outside the scope that defines it "
                          f"({self._where()})")
        else:
            self.fail(f"{kind} '{var.name_hint}' is used before its definition "
                      f"({self._where()})")

    def check_gvar(self, gvar, what):
        if self.mod is not None and gvar.name_hint not in self.mod:
            self.fail(f"{what} names function '{gvar.name_hint}', which is not in the module "
                      f"({self._where()})")

    def visit_if(self, node):
        if self.dataflow_vars is not None:
            self.fail(f"an If inside a dataflow block ({self._where()}); control flow belongs "
                      "outside dataflow blocks")
        self.visit(node.cond)
        for branch in (node.true_branch, node.false_branch):
            self.visible.append(set())
            try:
                self.visit(branch)
            finally:
                self.visible.pop()

    def visit_call(self, call):
        op = call.op
        if isinstance(op, Op):
            if op.name == "relax.call_tir" and call.args and isinstance(call.args[0], GlobalVar):
                self.check_gvar(call.args[0], "call_tir")
                args = call.args[1:]
            else:
                args = call.args
        else:
            if isinstance(op, GlobalVar):
                self.check_gvar(op, "a call")
            elif not isinstance(op, ExternFunc):
                self.visit(op)
            args = call.args
        for arg in args:
            self.visit(arg)
        for i, sinfo in enumerate(call.sinfo_args):
            self.check_tir_uses(sinfo, f"the output struct info of a call ({self._where()})")
        if self.is_impure(call):
            callee = _callee_text(op)
            if self.dataflow_vars is not None:
                self.fail(f"impure call of {callee} inside a dataflow block ({self._where()}); "
                          "dataflow blocks may only hold pure calls")
            elif self.func_pure:
                self.fail(f"impure call of {callee} in a pure function ({self._where()}); "
                          "declare the function impure (pure=False)")

    def is_impure(self, call):
        op = call.op
        if isinstance(op, Op):
            return not op.purity
        sinfo = op.struct_info_
        if isinstance(op, GlobalVar) and self.mod is not None and op.name_hint in self.mod:
            func = self.mod[op.name_hint]
            sinfo = func.struct_info_ if isinstance(func, Function) else None
        return isinstance(sinfo, FuncStructInfo) and not sinfo.purity


def _callee_text(op):
    if isinstance(op, Op):
        return f"'{op.name}'"
    if isinstance(op, ExternFunc):
        return f"'{op.global_symbol}' (call_packed)"
    return f"'{getattr(op, 'name_hint', type(op).__name__)}'"
