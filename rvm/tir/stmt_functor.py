"""Visitors and mutators over TIR statements and expressions.

Subclass ``StmtExprVisitor`` or ``StmtExprMutator`` and override a hook
``visit_<node>_`` (``visit_add_``, ``visit_buffer_load_``, ``visit_for_``,
``visit_block_``, ...: the class name in snake case). Every hook defaults to
visiting the node's fields, so an override can call ``super().visit_for_(op)``
to continue into the children. Buffers go through ``visit_buffer``.

>>> class CountLoads(StmtExprVisitor):
...     def __init__(self):
...         self.count = 0
...     def visit_buffer_load_(self, op):
...         self.count += 1
...         super().visit_buffer_load_(op)
"""
import re

from rvm.ir.expr import PrimExpr
from rvm.ir.node import Node
from rvm.tir import expr as _expr
from rvm.tir import stmt as _stmt
from rvm.tir.buffer import Buffer
from rvm.tir.expr import PrimExprWithOp, Var
from rvm.tir.op import const
from rvm.tir.stmt import Stmt

_hook_names = {}


def _is_definition(node, name, value):
    """Whether ``value`` is a variable (or list of them) that ``node`` defines: loop variables,
    let variables, block axes and function parameters are not visited as uses."""
    if name not in getattr(type(node), "_binding_fields", ()):
        return False
    if isinstance(value, Var):
        return True
    return isinstance(value, (list, tuple)) and all(isinstance(v, Var) for v in value) and value


def hook_name(node_type):
    """The visitor hook of a node class: ``BufferLoad`` -> ``visit_buffer_load_``."""
    name = _hook_names.get(node_type)
    if name is None:
        snake = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", node_type.__name__).lower()
        name = _hook_names[node_type] = f"visit_{snake}_"
    return name


_hook_functions = {}  # (visitor class, node class) -> the hook's function


def _hook_function(visitor_type, node_type):
    for cls in node_type.__mro__:
        function = getattr(visitor_type, hook_name(cls), None)
        if function is not None:
            return function
    return visitor_type._generic


def _hook(visitor, node):
    """The hook of ``visitor`` for ``node``; a node class without one of its own (a subclass
    defined elsewhere, such as a schedule's ExprRV) uses its nearest base class's hook.
    Hooks are looked up on the visitor's class (once per pair of classes)."""
    key = (type(visitor), type(node))
    function = _hook_functions.get(key)
    if function is None:
        function = _hook_functions[key] = _hook_function(*key)
    return function.__get__(visitor)


def _visited_fields(node_type):
    """(field name, whether the field may hold definitions) of a node class, cached."""
    fields = _visited_fields_cache.get(node_type)
    if fields is None:
        binding = getattr(node_type, "_binding_fields", ())
        fields = _visited_fields_cache[node_type] = tuple(
            (name, name in binding) for name in node_type._fields)
    return fields


_visited_fields_cache = {}


def _node_classes():
    for module in (_expr, _stmt):
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Node) and value.__module__ in (
                    _expr.__name__, _stmt.__name__):
                yield value


class StmtExprVisitor:
    """Walks statements and expressions; override ``visit_<node>_`` hooks."""

    def visit_stmt(self, stmt):
        """Dispatches a statement to its hook."""
        _hook(self, stmt)(stmt)

    def visit_expr(self, expr):
        """Dispatches an expression to its hook."""
        _hook(self, expr)(expr)

    def visit(self, node):
        """Visits any TIR node (statement, expression, buffer, region)."""
        self._visit_value(node)

    def visit_buffer(self, buffer):
        """Called for every Buffer met (declarations and accesses); visits nothing by default."""

    def _generic(self, node):
        for name, binding in _visited_fields(type(node)):
            value = getattr(node, name)
            if not (binding and _is_definition(node, name, value)):
                self._visit_value(value)

    def _visit_value(self, value):
        if isinstance(value, Stmt):
            self.visit_stmt(value)
        elif isinstance(value, PrimExpr):
            self.visit_expr(value)
        elif isinstance(value, Buffer):
            self.visit_buffer(value)
        elif isinstance(value, Node):
            _hook(self, value)(value)
        elif isinstance(value, (list, tuple)):
            for item in value:
                self._visit_value(item)
        elif isinstance(value, dict):
            for item in value.values():  # keys are names or defining variables, not uses
                self._visit_value(item)

    def visit_size_var_(self, op):
        self.visit_var_(op)


class StmtExprMutator:
    """Rebuilds statements and expressions bottom-up; hooks return the new node.

    A node whose children are all unchanged is returned as it is (identity), so
    callers can detect "no change" with ``is``.
    """

    def visit_stmt(self, stmt):
        """Dispatches a statement to its hook and returns the result."""
        return _hook(self, stmt)(stmt)

    def visit_expr(self, expr):
        """Dispatches an expression to its hook and returns the result."""
        return _hook(self, expr)(expr)

    def visit(self, node):
        """Mutates any TIR node (statement, expression, buffer, region)."""
        return self._mutate_value(node)

    def visit_buffer(self, buffer):
        """Called for every Buffer met; returns a (possibly new) Buffer. Identity by default."""
        return buffer

    def _generic(self, node):
        changes = {}
        for name, binding in _visited_fields(type(node)):
            old = getattr(node, name)
            if binding and _is_definition(node, name, old):
                continue
            new = self._mutate_value(old)
            if new is not old:
                changes[name] = new
        if not changes:
            return node
        if isinstance(node, PrimExprWithOp) and not isinstance(node, Var):
            # Expressions derive their dtype from their operands: rebuild through the
            # constructor, whose arguments are the fields in order.
            values = [changes.get(name, getattr(node, name)) for name in node._fields]
            return type(node)(*values, span=node.span)
        return node.with_fields(**changes)

    def _mutate_value(self, value):
        if isinstance(value, Stmt):
            return self.visit_stmt(value)
        if isinstance(value, PrimExpr):
            return self.visit_expr(value)
        if isinstance(value, Buffer):
            return self.visit_buffer(value)
        if isinstance(value, Node):
            return _hook(self, value)(value)
        if isinstance(value, (list, tuple)):
            items = [self._mutate_value(v) for v in value]
            if all(a is b for a, b in zip(items, value)):
                return value
            return type(value)(items) if isinstance(value, list) else tuple(items)
        if isinstance(value, dict):
            items = {k: self._mutate_value(v) for k, v in value.items()}
            same = all(items[k] is v for k, v in value.items())
            return value if same else items
        return value

    def visit_size_var_(self, op):
        return self.visit_var_(op)


for _cls in _node_classes():
    for _base in (StmtExprVisitor, StmtExprMutator):
        if hook_name(_cls) not in vars(_base):
            setattr(_base, hook_name(_cls), _base._generic)

ExprVisitor = StmtExprVisitor
ExprMutator = StmtExprMutator


class StmtVisitor(StmtExprVisitor):
    """Walks statements only; expressions are skipped unless ``visit_expr`` is overridden."""

    def visit_expr(self, expr):
        """Expressions are not entered by a statement-only visitor."""


class StmtMutator(StmtExprMutator):
    """Rebuilds statements only; expressions are kept as they are."""

    def visit_expr(self, expr):
        """Expressions are kept by a statement-only mutator."""
        return expr


class _PostOrder(StmtExprVisitor):
    def __init__(self, fvisit):
        self.fvisit = fvisit

    def visit_stmt(self, stmt):
        super().visit_stmt(stmt)
        self.fvisit(stmt)

    def visit_expr(self, expr):
        super().visit_expr(expr)
        self.fvisit(expr)


def post_order_visit(node, fvisit):
    """Calls ``fvisit`` on every statement and expression under ``node``, children first."""
    _PostOrder(fvisit).visit(node)


def substitute(node, value_map):
    """``node`` with variables replaced: ``value_map`` maps Var -> PrimExpr (or a callable).

    Definitions (loop variables, block axes) are not replaced; nothing is simplified.

    >>> i = Var("i")
    >>> substitute(i + 1, {i: Var("j")})
    j + 1
    """
    if callable(value_map):
        lookup = value_map
    else:
        by_id = {id(k): v for k, v in value_map.items()}

        def lookup(var):
            return by_id.get(id(var))

    return _Substitute(lookup).visit(node)


class _Substitute(StmtExprMutator):
    def __init__(self, lookup):
        self.lookup = lookup

    def visit_var_(self, op):
        new = self.lookup(op)
        if new is None:
            return op
        return new if isinstance(new, PrimExpr) else const(new, op.dtype)
