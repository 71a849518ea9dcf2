"""ExprVisitor and ExprMutator: the generic walks over Relax IR that passes build on.

Override the ``visit_<node>_`` hook of the nodes a pass cares about; the
default hooks walk the children. ``ExprMutator`` rebuilds only what changed,
re-normalizes through its ``builder`` (a BlockBuilder), and renames a bound
variable when its value's struct info changes, remapping later uses.

>>> class CountCalls(ExprVisitor):
...     def __init__(self):
...         self.count = 0
...     def visit_call_(self, call):
...         self.count += 1
...         super().visit_call_(call)
"""
import re

from rvm.ir.expr import GlobalVar
from rvm.ir.base import structural_equal
from rvm.relax.binding import BindingBlock, DataflowBlock, MatchCast, SeqExpr, VarBinding
from rvm.relax.block_builder import BlockBuilder
from rvm.relax.expr import Call, DataflowVar, If, Tuple, TupleGetItem, Var
from rvm.relax.function import Function
from rvm.relax.op.registry import Op

_SNAKE = re.compile(r"(?<!^)(?=[A-Z][a-z])")
_HOOKS = {}


def _hook_name(cls):
    name = _HOOKS.get(cls)
    if name is None:
        name = "visit_" + _SNAKE.sub("_", cls.__name__).lower() + "_"
        _HOOKS[cls] = name
    return name


def _dispatch(functor, node, kind):
    for cls in type(node).__mro__:
        method = getattr(functor, _hook_name(cls), None)
        if method is not None:
            return method(node)
    raise TypeError(f"{type(functor).__name__}: no hook for {kind} {type(node).__name__}")


class ExprVisitor:
    """Walks every expression, binding and block; hooks return nothing."""

    def visit_expr(self, expr):
        """Dispatches to ``visit_<node>_``."""
        _dispatch(self, expr, "expression")

    def visit_binding_block(self, block):
        """Dispatches to ``visit_binding_block_`` or ``visit_dataflow_block_``."""
        _dispatch(self, block, "block")

    def visit_binding(self, binding):
        """Dispatches to ``visit_var_binding_`` or ``visit_match_cast_``."""
        _dispatch(self, binding, "binding")

    def visit_var_def(self, var):
        """Called where ``var`` is defined (parameter or binding)."""

    # leaves
    def visit_var_(self, var):
        pass

    def visit_relax_expr_(self, expr):
        pass  # Constant, ShapeExpr, PrimValue, StringImm, DataTypeImm, ExternFunc, GlobalVar, Op

    def visit_base_func_(self, func):
        pass  # PrimFuncs are not walked

    # compound expressions
    def visit_tuple_(self, tup):
        for field in tup.fields:
            self.visit_expr(field)

    def visit_tuple_get_item_(self, item):
        self.visit_expr(item.tuple_value)

    def visit_call_(self, call):
        self.visit_expr(call.op)
        for arg in call.args:
            self.visit_expr(arg)

    def visit_if_(self, node):
        self.visit_expr(node.cond)
        self.visit_expr(node.true_branch)
        self.visit_expr(node.false_branch)

    def visit_seq_expr_(self, seq):
        for block in seq.blocks:
            self.visit_binding_block(block)
        self.visit_expr(seq.body)

    def visit_function_(self, func):
        for param in func.params:
            self.visit_var_def(param)
        self.visit_expr(func.body)

    # blocks and bindings
    def visit_binding_block_(self, block):
        for binding in block.bindings:
            self.visit_binding(binding)

    def visit_var_binding_(self, binding):
        self.visit_expr(binding.value)
        self.visit_var_def(binding.var)

    def visit_match_cast_(self, binding):
        self.visit_expr(binding.value)
        self.visit_var_def(binding.var)


class ExprMutator:
    """Rebuilds expressions; hooks return the (possibly new) node.

    ``mod`` gives GlobalVars their meaning when calls are re-normalized.
    """

    def __init__(self, mod=None):
        self.builder = BlockBuilder(mod, check_global_vars=False)
        self.var_remap = {}

    def visit_expr(self, expr):
        """Dispatches to ``visit_<node>_`` and returns the normalized result."""
        return self.builder.normalize(_dispatch(self, expr, "expression"))

    def visit_binding_block(self, block):
        """The block with every binding visited (bindings may be added or dropped)."""
        with self.builder.binding_scope(isinstance(block, DataflowBlock)) as frame:
            for binding in block.bindings:
                self.visit_binding(binding)
        return type(block)(frame.bindings, block.span)

    def visit_binding(self, binding):
        """Dispatches to ``visit_var_binding_`` / ``visit_match_cast_``; these emit into
        ``self.builder`` (use ``self.builder.emit_normalized``)."""
        _dispatch(self, binding, "binding")

    def visit_var_def(self, var):
        """The variable to define in place of ``var`` (default: ``var``)."""
        return var

    def lookup(self, var):
        """What uses of ``var`` now refer to."""
        return self.var_remap.get(id(var), var)

    def set_var_remap(self, var, new):
        """Makes later uses of ``var`` refer to ``new``."""
        self.var_remap[id(var)] = new

    # leaves
    def visit_var_(self, var):
        return self.lookup(var)

    def visit_relax_expr_(self, expr):
        return expr

    def visit_global_var_(self, gvar):
        return gvar

    def visit_op_(self, op):
        return op

    def visit_base_func_(self, func):
        return func

    # compound expressions
    def visit_tuple_(self, tup):
        fields = [self.visit_expr(f) for f in tup.fields]
        if all(a is b for a, b in zip(fields, tup.fields)):
            return tup
        return Tuple(fields, tup.span)

    def visit_tuple_get_item_(self, item):
        value = self.visit_expr(item.tuple_value)
        return item if value is item.tuple_value else TupleGetItem(value, item.index, item.span)

    def visit_call_(self, call):
        op = call.op if isinstance(call.op, (Op, GlobalVar)) else self.visit_expr(call.op)
        args = [self.visit_expr(a) for a in call.args]
        if op is call.op and all(a is b for a, b in zip(args, call.args)):
            return call
        return Call(op, args, call.attrs, call.sinfo_args, call.span)

    def visit_if_(self, node):
        cond = self.visit_expr(node.cond)
        true_branch = self.visit_with_new_scope(node.true_branch)
        false_branch = self.visit_with_new_scope(node.false_branch)
        if (cond is node.cond and true_branch is node.true_branch
                and false_branch is node.false_branch):
            return node
        return If(cond, true_branch, false_branch, node.span)

    def visit_with_new_scope(self, expr):
        """``expr`` visited with its own binding frame (an If branch, a function body)."""
        with self.builder.binding_scope() as frame:
            new = self.visit_expr(expr)
        if frame.bindings:
            return SeqExpr([BindingBlock(frame.bindings)], new)
        return new

    def visit_seq_expr_(self, seq):
        blocks = [self.visit_binding_block(b) for b in seq.blocks]
        body = self.visit_with_new_scope(seq.body)
        if isinstance(body, SeqExpr) and body is not seq.body and not isinstance(seq.body,
                                                                                 SeqExpr):
            blocks.extend(body.blocks)
            body = body.body
        blocks = [b for b in blocks if b.bindings]
        unchanged = body is seq.body and len(blocks) == len(seq.blocks) and all(
            _same_block(a, b) for a, b in zip(blocks, seq.blocks))
        return seq if unchanged else SeqExpr(blocks, body, seq.span)

    def visit_function_(self, func):
        params = [self.visit_var_def(p) for p in func.params]
        body = self.visit_with_new_scope(func.body)
        if body is func.body and all(a is b for a, b in zip(params, func.params)):
            return func
        return Function(params, body, func.ret_struct_info, func.is_pure, func.attrs, func.span)

    # bindings
    def _redefine(self, var, sinfo):
        new = self.visit_var_def(var)
        if sinfo is not None and not structural_equal(new.struct_info_, sinfo):
            new = (DataflowVar if isinstance(var, DataflowVar) else Var)(
                var.name_hint, sinfo, var.span)
        if new is not var:
            self.set_var_remap(var, new)
        return new

    def visit_var_binding_(self, binding):
        value = self.visit_expr(binding.value)
        var = self._redefine(binding.var, value.struct_info_)
        if var is binding.var and value is binding.value:
            self.builder.emit_normalized(binding)
        else:
            self.builder.emit_normalized(VarBinding(var, value, binding.span))

    def visit_match_cast_(self, binding):
        value = self.visit_expr(binding.value)
        var = self._redefine(binding.var, None)
        if var is binding.var and value is binding.value:
            self.builder.emit_normalized(binding)
        else:
            self.builder.emit_normalized(MatchCast(var, value, binding.struct_info,
                                                   binding.span))


def _same_block(new, old):
    return len(new.bindings) == len(old.bindings) and all(
        a is b for a, b in zip(new.bindings, old.bindings))
