"""TIR expressions as script text: ``X[vi, vk] * W[vj, vk]``, ``T.max(x, T.float32(0))``."""
import json
import math

from rvm.ir.structural import structural_equal
from rvm.tir import expr as _e

# (node type, symbol, precedence); precedences follow Python's.
_INFIX = {
    _e.Or: ("or", 1), _e.And: ("and", 2),
    _e.EQ: ("==", 4), _e.NE: ("!=", 4), _e.LT: ("<", 4), _e.LE: ("<=", 4), _e.GT: (">", 4),
    _e.GE: (">=", 4),
    _e.Add: ("+", 5), _e.Sub: ("-", 5),
    _e.Mul: ("*", 6), _e.FloorDiv: ("//", 6), _e.FloorMod: ("%", 6),
}
_COMPARE = {_e.EQ, _e.NE, _e.LT, _e.LE, _e.GT, _e.GE}
_FUNCS = {_e.Min: "T.min", _e.Max: "T.max", _e.Mod: "T.truncmod"}
ATOM = 9


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


def _same(a, b):
    return structural_equal(a, b, map_free_vars=False)


class ExprPrinter:
    """Prints TIR expressions; ``names`` maps variables and buffers to their printed names."""

    def __init__(self, names, on_free_var=None):
        self.names = names
        self.on_free_var = on_free_var

    def __call__(self, x):
        return self.text(x)[0]

    def var_name(self, var):
        """The printed name of a TIR variable (declaring it when free)."""
        name = self.names.get(var)
        if name is None:
            if self.on_free_var is not None:
                name = self.on_free_var(var)
            if name is None:
                name = var.name_hint
        return name

    def buffer_name(self, buf):
        """The printed name of a buffer."""
        name = self.names.get(buf)
        return name if name is not None else buf.name

    def text(self, x):
        """(text, precedence) of ``x``."""
        if isinstance(x, (bool, int, float, str)):
            return (quote(x) if isinstance(x, str) else repr(x)), ATOM
        if isinstance(x, _e.Var):
            return self.var_name(x), ATOM
        if isinstance(x, _e.IntImm):
            text = int_text(x.value, x.dtype)
            return text, (7 if text.startswith("-") else ATOM)
        if isinstance(x, _e.FloatImm):
            return float_text(x.value, x.dtype), ATOM
        if isinstance(x, _e.StringImm):
            return quote(x.value), ATOM
        infix = _INFIX.get(type(x))
        if infix is None and isinstance(x, _e.Div):
            infix = ("/", 6) if x.dtype.is_float else None
        if infix is not None:
            return self._infix(x, *infix), infix[1]
        if type(x) in _FUNCS:
            return f"{_FUNCS[type(x)]}({self(x.a)}, {self(x.b)})", ATOM
        if isinstance(x, _e.Div):
            return f"T.Div({self(x.a)}, {self(x.b)})", ATOM
        if isinstance(x, _e.Not):
            inner, prec = self.text(x.a)
            return "not " + (inner if prec > 3 else f"({inner})"), 3
        if isinstance(x, _e.Cast):
            return f"T.Cast({quote(x.dtype)}, {self(x.value)})", ATOM
        if isinstance(x, _e.Select):
            return f"T.Select({self(x.condition)}, {self(x.true_value)}, {self(x.false_value)})", \
                ATOM
        if isinstance(x, _e.Call):
            return self._call(x), ATOM
        if isinstance(x, _e.BufferLoad):
            return f"{self.buffer_name(x.buffer)}[{self.indices(x.indices, x.buffer)}]", ATOM
        if isinstance(x, _e.Ramp):
            return f"T.Ramp({self(x.base)}, {self(x.stride)}, {x.lanes})", ATOM
        if isinstance(x, _e.Broadcast):
            return f"T.Broadcast({self(x.value)}, {x.lanes})", ATOM
        if isinstance(x, _e.Let):
            value = self(x.value)
            name = self.names.get(x.var) or self.names.define(x.var, x.var.name_hint)
            return f"T.Let({self(x.body)}, where={{{name}: {value}}})", ATOM
        if isinstance(x, _e.Reduce):
            axes = ", ".join(self(iv.var) for iv in x.axis)
            return f"T.reduce_{x.combiner}({self(x.source)}, axis=[{axes}])", ATOM
        if hasattr(x, "shape") and hasattr(x, "data"):  # a Buffer passed to call_packed
            return self.buffer_name(x), ATOM
        raise TypeError(f"cannot print {type(x).__name__} as a TIR expression")

    def _infix(self, x, symbol, prec):
        left, lp = self.text(x.a)
        right, rp = self.text(x.b)
        compare = type(x) in _COMPARE
        if lp < prec or (compare and lp == prec):
            left = f"({left})"
        if rp <= prec:
            right = f"({right})"
        return f"{left} {symbol} {right}"

    def indices(self, indices, buffer=None):
        """``i, j + 1``: the text inside ``A[...]``; constants of the dimension's dtype print as
        plain ints, which the buffer converts back; others (an int32 0 into an int64
        dimension) name their dtype."""
        dims = buffer.shape if buffer is not None else ()
        parts = []
        for k, index in enumerate(indices):
            if isinstance(index, _e.IntImm) and k < len(dims) and index.dtype == dims[k].dtype \
                    and index.dtype != "bool":
                parts.append(str(index.value))
            elif isinstance(index, _e.IntImm) and index.dtype == "int32" and k < len(dims):
                parts.append(f"T.int32({index.value})")
            else:
                parts.append(self(index))
        return ", ".join(parts) if parts else "()"  # a scalar buffer: A[()]

    def _call(self, x):
        args = [self(a) for a in x.args]
        op = x.op
        if op in ("tir.call_packed", "tir.call_extern") and x.args:
            if op == "tir.call_extern":
                args.insert(0, quote(x.dtype))
            return f"T.{op[4:]}({', '.join(args)})"
        name = op[4:] if op.startswith("tir.") else None
        from rvm.script.parser.tir_builtins import INTRINSICS  # the parser reads these back

        if name is not None and INTRINSICS.get(name) is not None and \
                INTRINSICS[name](*x.args).dtype == x.dtype:
            return f"T.{name}({', '.join(args)})"
        return f"T.call_intrin({quote(x.dtype)}, {quote(op)}{''.join(', ' + a for a in args)})"

    def range_end(self, begin, extent):
        """The text of ``begin + extent`` such that the parser recovers ``extent`` exactly."""
        if isinstance(begin, _e.IntImm) and isinstance(extent, _e.IntImm):
            if begin.dtype == extent.dtype:
                return int_text(begin.value + extent.value, begin.dtype)
        if isinstance(extent, _e.Sub) and _same(extent.b, begin):
            return self(extent.a)  # the parser computes stop - start, giving this Sub back
        left, lp = self.text(begin)
        right, rp = self.text(extent)
        left = left if lp >= 5 else f"({left})"
        right = right if rp > 5 else f"({right})"
        return f"{left} + {right}"
