"""One printer for TIR expressions: a table of operators and a method per other node kind.

``ExprPrinter`` prints script syntax (``X[vi, vk] * W[vj, vk]``, ``T.max(x, T.float32(0))``);
a dialect is a subclass that changes the tables or a few node methods: the TVMScript
printer (names from its scopes, intrinsic calls it can parse back), the C backend
(C operators, fully parenthesized), struct-info text (bare integer dimensions) and
index-map lambdas (integer arithmetic only).

>>> from rvm.tir.expr import Var
>>> i, j = Var("i"), Var("j")
>>> expr_text((i + 1) * j)
'(i + 1) * j'
"""
import json
import math

from rvm.tir import expr as _e

# Node type -> (symbol, precedence); precedences follow Python's.
INFIX = {
    _e.Or: ("or", 1), _e.And: ("and", 2),
    _e.EQ: ("==", 4), _e.NE: ("!=", 4), _e.LT: ("<", 4), _e.LE: ("<=", 4), _e.GT: (">", 4),
    _e.GE: (">=", 4),
    _e.Add: ("+", 5), _e.Sub: ("-", 5),
    _e.Mul: ("*", 6), _e.FloorDiv: ("//", 6), _e.FloorMod: ("%", 6),
}
COMPARE = frozenset({_e.EQ, _e.NE, _e.LT, _e.LE, _e.GT, _e.GE})
# Node type -> the function that prints it: ``T.min(a, b)``.
CALLS = {_e.Min: "T.min", _e.Max: "T.max", _e.Mod: "T.truncmod"}
ATOM = 9
UNARY = 7  # a negative literal: binds tighter than * but looser than an atom
_METHODS = {}  # (dialect, node type) -> function


def quote(text):
    """A double-quoted Python string literal."""
    return json.dumps(str(text))


def int_text(value, dtype):
    """An integer constant: bare for int32, ``T.int64(5)`` otherwise, ``T.bool(True)`` for bool."""
    if dtype == "bool":
        return f"T.bool({bool(value)})"
    if dtype == "int32":
        return str(value)
    return f"T.{dtype}({value})"


def float_text(value, dtype):
    """``T.float32(0.5)``; non-finite values as strings (``T.float32("inf")``)."""
    if math.isnan(value) or math.isinf(value):
        return f'T.{dtype}("{value}")'
    return f"T.{dtype}({value!r})"


class ExprPrinter:
    """Prints TIR expressions in script syntax; variables and buffers by their own names.

    Node kinds are printed from ``infix`` and ``calls`` when listed there, otherwise by
    the method ``print_<NodeType>`` (found along the type's bases; None hides a base's
    method), otherwise by ``unknown``. A method returns its text, or ``(text, precedence)``
    when the text binds looser than an atom.
    """

    infix = INFIX
    calls = CALLS

    def __call__(self, x):
        return self.text(x)[0]

    def text(self, x):
        """(text, precedence) of ``x``."""
        kind = type(x)
        if kind in self.infix:
            out = self.print_infix(x, *self.infix[kind])
        elif kind in self.calls:
            out = f"{self.calls[kind]}({self(x.a)}, {self(x.b)})"
        else:
            out = self._method(kind)(self, x)
        return (out, ATOM) if isinstance(out, str) else out

    @classmethod
    def _method(cls, kind):
        """The function printing nodes of type ``kind`` in this dialect (looked up once)."""
        key = (cls, kind)
        method = _METHODS.get(key)
        if method is None:
            names = ("print_" + base.__name__ for base in kind.__mro__)
            method = next((getattr(cls, n) for n in names if getattr(cls, n, None) is not None),
                          cls.unknown)
            _METHODS[key] = method
        return method

    def unknown(self, x):
        raise TypeError(f"cannot print {type(x).__name__} as a TIR expression")

    # ---- names
    def var_name(self, var):
        """The printed name of a TIR variable."""
        return var.name_hint

    def bind_name(self, var):
        """The printed name of a variable that ``T.Let`` binds."""
        return self.var_name(var)

    def buffer_name(self, buf):
        """The printed name of a buffer."""
        return buf.name

    # ---- operators
    def print_infix(self, x, symbol, prec):
        left, lp = self.text(x.a)
        right, rp = self.text(x.b)
        if lp < prec or (type(x) in COMPARE and lp == prec):
            left = f"({left})"
        if rp <= prec:
            right = f"({right})"
        return f"{left} {symbol} {right}", prec

    def print_Div(self, x):
        if x.dtype.is_float:
            return self.print_infix(x, "/", 6)
        return f"T.Div({self(x.a)}, {self(x.b)})"

    def print_Not(self, x):
        inner, prec = self.text(x.a)
        return "not " + (inner if prec > 3 else f"({inner})"), 3

    # ---- leaves
    def print_bool(self, x):
        return repr(x)

    print_int = print_float = print_bool

    def print_str(self, x):
        return quote(x)

    def print_Var(self, x):
        return self.var_name(x)

    def print_IntImm(self, x):
        text = int_text(x.value, x.dtype)
        return text, (UNARY if text.startswith("-") else ATOM)

    def print_FloatImm(self, x):
        return float_text(x.value, x.dtype)

    def print_StringImm(self, x):
        return quote(x.value)

    def print_Buffer(self, x):  # an argument of call_packed
        return self.buffer_name(x)

    # ---- composites
    def print_Cast(self, x):
        return f"T.Cast({quote(x.dtype)}, {self(x.value)})"

    def print_Select(self, x):
        return f"T.Select({self(x.condition)}, {self(x.true_value)}, {self(x.false_value)})"

    def print_Call(self, x):
        args = [self(a) for a in x.args]
        if x.op == "tir.call_extern" and x.args:
            args.insert(0, quote(x.dtype))
        name = x.op[4:] if x.op.startswith("tir.") else x.op
        return f"T.{name}({', '.join(args)})"

    def print_BufferLoad(self, x):
        return f"{self.buffer_name(x.buffer)}[{self.indices(x.indices, x.buffer)}]"

    def indices(self, indices, buffer=None):
        """``i, j + 1``: the text inside ``A[...]``."""
        return ", ".join(self(i) for i in indices) if indices else "()"

    def print_Ramp(self, x):
        return f"T.Ramp({self(x.base)}, {self(x.stride)}, {x.lanes})"

    def print_Broadcast(self, x):
        return f"T.Broadcast({self(x.value)}, {x.lanes})"

    def print_Let(self, x):
        value = self(x.value)
        return f"T.Let({self(x.body)}, where={{{self.bind_name(x.var)}: {value}}})"

    def print_Reduce(self, x):
        axes = ", ".join(self(iv.var) for iv in x.axis)
        return f"T.reduce_{x.combiner}({self(x.source)}, axis=[{axes}])"


class ReprPrinter(ExprPrinter):
    """The text of ``repr(expr)``: never fails, whatever the node."""

    def unknown(self, x):
        return object.__repr__(x)


class BareIntPrinter(ReprPrinter):
    """Shapes and index maps as users write them: integer constants of any dtype as plain
    numbers (``n * 2``, not ``n * T.int64(2)``), casts left out."""

    def print_IntImm(self, x):
        if x.dtype == "bool":
            return super().print_IntImm(x)
        return str(x.value), (UNARY if x.value < 0 else ATOM)

    def print_Cast(self, x):
        return self.text(x.value)


_REPR = ReprPrinter()
_BARE = BareIntPrinter()


def expr_text(x):
    """The script-syntax text of a TIR expression: ``expr_text(i * 4 + j) == "i * 4 + j"``."""
    return _REPR(x)


def dim_text(dim):
    """A shape dimension as users write it: ``n * 2``, ``4``."""
    return _BARE(dim)
