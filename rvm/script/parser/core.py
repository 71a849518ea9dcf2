"""The parser's core: scopes, errors and evaluation of Python expressions as script values.

A script is never executed. The parser walks its ``ast`` and evaluates each
expression itself: literals and tuples become Python values, names resolve
through the scopes (then the defining module's globals), ``T.xxx`` and
``R.xxx`` resolve to the builtins of the dialects, and operators on IR
values build IR (TIR arithmetic, Relax operator calls).
"""
import ast
import contextlib
import operator

from rvm.ir.expr import PrimExpr, RelaxExpr
from rvm.ir.node import Span
from rvm.script.parser.diagnostics import ParseError

DIALECTS = {"ir": "I", "tir": "T", "relax": "R"}
DEFAULT_ALIASES = {"I": "ir", "T": "tir", "R": "relax"}
_PY_BINOPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_PY_COMPARE = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge,
}
CONVERTED_ERRORS = (TypeError, ValueError, IndexError, KeyError, ZeroDivisionError,
                     AttributeError)


class Builtin:
    """A script function such as ``T.grid`` or ``R.call_tir``.

    ``fn(parser, node, *args, **kwargs)`` receives the evaluated arguments and
    the call's ast node (for errors).
    """

    def __init__(self, name, fn):
        self.name = name
        self.fn = fn

    def __repr__(self):
        return f"<script builtin {self.name}>"


class Namespace:
    """A dialect namespace (``T``, ``R``, ``I``) or one of its sub-namespaces (``T.axis``)."""

    def __init__(self, dialect, path=""):
        self.dialect = dialect
        self.path = path

    def qualified(self, attr):
        """The dotted name of ``attr`` inside this namespace."""
        return f"{self.path}.{attr}" if self.path else attr


class ScriptParser:
    """Evaluates expressions of one script function; dialect parsers extend it.

    ``tables`` maps a dialect ("tir", "relax", "ir") to {dotted name: Builtin}.
    """

    tables = {}

    def __init__(self, source, env=None, aliases=None):
        self.source = source
        self.env = dict(env or {})
        self.aliases = dict(aliases or DEFAULT_ALIASES)
        self.scopes = [{}]

    # -- errors and scopes ---------------------------------------------------------------
    def error(self, node, message):
        """A ParseError at ``node`` (raise it)."""
        return self.source.error(node, message)

    def span(self, node):
        """The Span (file, line, column) of an ast node, for the IR built from it."""
        return Span(self.source.filename, node.lineno + self.source.first_line - 1,
                    node.col_offset + 1 + self.source.indent)

    @contextlib.contextmanager
    def scope(self):
        """A nested scope: names defined inside disappear at its end."""
        self.scopes.append({})
        try:
            yield self.scopes[-1]
        finally:
            self.scopes.pop()

    def define(self, name, value):
        """Binds ``name`` in the innermost scope."""
        self.scopes[-1][name] = value

    def lookup_local(self, name):
        """(found, value) of ``name`` in the scopes, innermost first."""
        for frame in reversed(self.scopes):
            if name in frame:
                return True, frame[name]
        return False, None

    def lookup(self, name, node):
        """The value of ``name``: scopes, dialect aliases, then the defining module's names."""
        found, value = self.lookup_local(name)
        if found:
            return value
        if name in self.aliases:
            return Namespace(self.aliases[name])
        if name in self.env:
            return self.env[name]
        if name in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[name]
        raise self.error(node, self.unknown_name_message(name))

    def unknown_name_message(self, name):
        """The error text for an unknown ``name``."""
        return f"unknown name '{name}'; expected a variable, buffer or function defined before"

    # -- builtins ------------------------------------------------------------------------
    def namespace_attr(self, ns, attr, node):
        """``T.attr``: a builtin, a sub-namespace, or an error listing what exists."""
        table = self.tables.get(ns.dialect, {})
        name = ns.qualified(attr)
        if name in table:
            return table[name]
        prefix = name + "."
        if any(key.startswith(prefix) for key in table):
            return Namespace(ns.dialect, name)
        fallback = self.dynamic_builtin(ns.dialect, name)
        if fallback is not None:
            return fallback
        alias = DIALECTS[ns.dialect]
        raise self.error(node, f"unknown name '{alias}.{name}'; {alias} has no such "
                               f"function or type")

    def dynamic_builtin(self, dialect, name):
        """A builtin found outside the static tables (Relax operators of the registry)."""
        return None

    def is_builtin(self, node, *names):
        """Whether ``node`` is a call (or attribute) naming one of the builtins ``names``."""
        if isinstance(node, ast.Call):
            node = node.func
        dotted = self.dotted(node)
        return dotted is not None and dotted in names

    def dotted(self, node):
        """``"tir.axis.remap"`` for the ast of ``T.axis.remap`` (None for other nodes)."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or not parts:
            return None
        found, _ = self.lookup_local(node.id)
        if found or node.id not in self.aliases:
            return None
        return ".".join([self.aliases[node.id]] + parts[::-1])

    # -- expressions ---------------------------------------------------------------------
    def eval(self, node):
        """The value of an ast expression."""
        method = getattr(self, "eval_" + type(node).__name__, None)
        if method is None:
            raise self.error(node, f"unsupported expression ({type(node).__name__}); expected a "
                                   "name, constant, call, subscript, tuple or arithmetic")
        try:
            return method(node)
        except ParseError:
            raise
        except CONVERTED_ERRORS as err:
            raise self.error(node, str(err)) from None

    def eval_Constant(self, node):
        """Evaluates an ast.Constant node."""
        return node.value

    def eval_Name(self, node):
        """Evaluates an ast.Name node."""
        return self.lookup(node.id, node)

    def eval_Tuple(self, node):
        """Evaluates an ast.Tuple node."""
        return tuple(self.eval(e) for e in node.elts)

    def eval_List(self, node):
        """Evaluates an ast.List node."""
        return [self.eval(e) for e in node.elts]

    def eval_Dict(self, node):
        """Evaluates an ast.Dict node."""
        if any(k is None for k in node.keys):
            raise self.error(node, "unsupported '**' in a dict; expected key: value pairs")
        return {self.eval(k): self.eval(v) for k, v in zip(node.keys, node.values)}

    def eval_Attribute(self, node):
        """Evaluates an ast.Attribute node."""
        value = self.eval(node.value)
        if isinstance(value, Namespace):
            return self.namespace_attr(value, node.attr, node)
        return self.attribute(value, node.attr, node)

    def attribute(self, value, attr, node):
        """``value.attr`` for IR values; dialects extend it (``cls.func``)."""
        if attr.startswith("_") or not hasattr(value, attr):
            raise self.error(node, f"{type(value).__name__} has no attribute '{attr}'")
        return getattr(value, attr)

    def eval_Call(self, node):
        """Evaluates an ast.Call node."""
        func = self.eval(node.func)
        args = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                args.extend(self.eval(a.value))
            else:
                args.append(self.eval(a))
        kwargs = {}
        for kw in node.keywords:
            if kw.arg is None:
                raise self.error(kw, "unsupported '**' argument; expected name=value")
            kwargs[kw.arg] = self.eval(kw.value)
        return self.call(func, args, kwargs, node)

    def call(self, func, args, kwargs, node):
        """Calls a builtin (dialects extend this for IR callees)."""
        if isinstance(func, Builtin):
            return func.fn(self, node, *args, **kwargs)
        raise self.error(node.func, f"'{ast.unparse(node.func)}' is not callable here; expected "
                                    "a T./R. function or a function of the module")

    def eval_UnaryOp(self, node):
        """Evaluates an ast.UnaryOp node."""
        value = self.eval(node.operand)
        if isinstance(node.op, ast.USub):
            return -value
        if isinstance(node.op, ast.UAdd):
            return value
        if isinstance(node.op, ast.Not):
            return self.logical_not(value, node)
        return ~value

    def logical_not(self, value, node):
        """``not value`` for Python or IR values."""
        if isinstance(value, PrimExpr):
            return ~value
        return not value

    def eval_BinOp(self, node):
        """Evaluates an ast.BinOp node."""
        lhs = self.eval(node.left)
        rhs = self.eval(node.right)
        if isinstance(lhs, (PrimExpr, RelaxExpr)) or isinstance(rhs, (PrimExpr, RelaxExpr)):
            return self.ir_binop(node, type(node.op), lhs, rhs)
        fn = _PY_BINOPS.get(type(node.op))
        if fn is None:
            raise self.error(node, f"unsupported operator {type(node.op).__name__}")
        return fn(lhs, rhs)

    def ir_binop(self, node, op, lhs, rhs):
        """``lhs <op> rhs`` where an operand is IR (dialects define it)."""
        raise self.error(node, "arithmetic on IR values is not supported here")

    def eval_Compare(self, node):
        """Evaluates an ast.Compare node."""
        if len(node.ops) != 1:
            raise self.error(node, "chained comparisons are not supported; expected 'a < b'")
        lhs = self.eval(node.left)
        rhs = self.eval(node.comparators[0])
        op = type(node.ops[0])
        if isinstance(lhs, (PrimExpr, RelaxExpr)) or isinstance(rhs, (PrimExpr, RelaxExpr)):
            return self.ir_binop(node, op, lhs, rhs)
        if op not in _PY_COMPARE:
            raise self.error(node, f"unsupported comparison {op.__name__}")
        return _PY_COMPARE[op](lhs, rhs)

    def eval_BoolOp(self, node):
        """Evaluates an ast.BoolOp node."""
        values = [self.eval(v) for v in node.values]
        result = values[0]
        for value in values[1:]:
            if isinstance(result, PrimExpr) or isinstance(value, PrimExpr):
                result = self.ir_binop(node, type(node.op), result, value)
            elif isinstance(node.op, ast.And):
                result = result and value
            else:
                result = result or value
        return result

    def eval_Subscript(self, node):
        """Evaluates an ast.Subscript node."""
        value = self.eval(node.value)
        return self.subscript(value, node)

    def subscript(self, value, node):
        """``value[...]`` for the indexable values of the dialect."""
        index = self.eval(node.slice)
        if isinstance(value, (tuple, list, dict, str)):
            try:
                return value[index]
            except (IndexError, KeyError, TypeError):
                raise self.error(node.slice, f"index {index!r} is out of range for "
                                             f"{type(value).__name__} of {len(value)} "
                                             "elements") from None
        raise self.error(node, f"{type(value).__name__} cannot be indexed here")

    def eval_Slice(self, node):
        """Evaluates an ast.Slice node."""
        raise self.error(node, "a slice is only allowed when indexing a buffer")

    # -- helpers -------------------------------------------------------------------------
    def target_names(self, target, count=None):
        """The names an assignment target binds: ``x`` or ``a, b, c``."""
        if isinstance(target, ast.Name):
            names = [target.id]
        elif isinstance(target, (ast.Tuple, ast.List)) and all(
                isinstance(e, ast.Name) for e in target.elts):
            names = [e.id for e in target.elts]
        else:
            raise self.error(target, "unsupported assignment target; expected a name or a "
                                     "tuple of names")
        if count is not None and len(names) != count:
            raise self.error(target, f"expected {count} name(s) on the left, found {len(names)}")
        return names

    def check_arity(self, node, name, args, low, high=None):
        """Raises a ParseError unless ``low <= len(args) <= high``."""
        high = low if high is None else high
        if not low <= len(args) <= high:
            expected = str(low) if low == high else f"{low} to {high}"
            raise self.error(node, f"{name} expects {expected} argument(s), got {len(args)}")


_DECORATOR_KINDS = {"tir.prim_func": "prim_func", "relax.function": "function"}


def decorator_kind(source, node, aliases):
    """("prim_func" | "function" | "ir_module" | None, options) of a decorated definition."""
    parser = ScriptParser(source, aliases=aliases)  # evaluates decorator arguments only
    for dec in node.decorator_list:
        call = dec if isinstance(dec, ast.Call) else None
        target = call.func if call is not None else dec
        dotted = parser.dotted(target)
        options = {}
        if call is not None:
            if call.args:
                raise source.error(call, "decorator arguments must be keywords such as "
                                         "private=True")
            options = {kw.arg: parser.eval(kw.value) for kw in call.keywords}
        if dotted in _DECORATOR_KINDS:
            return _DECORATOR_KINDS[dotted], options
        if isinstance(target, ast.Attribute) and target.attr == "ir_module" or \
                isinstance(target, ast.Name) and target.id == "ir_module":
            return "ir_module", options
    return None, {}
