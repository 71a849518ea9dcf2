"""A compact text form of TIR expressions, in script syntax (used by repr and error messages)."""
from rvm.tir import expr as _e

_INFIX = [
    (_e.Or, "or", 1), (_e.And, "and", 2),
    (_e.EQ, "==", 4), (_e.NE, "!=", 4), (_e.LT, "<", 4), (_e.LE, "<=", 4), (_e.GT, ">", 4),
    (_e.GE, ">=", 4),
    (_e.Add, "+", 5), (_e.Sub, "-", 5),
    (_e.Mul, "*", 6), (_e.Div, "/", 6), (_e.FloorDiv, "//", 6), (_e.FloorMod, "%", 6),
]
_FUNCS = {_e.Min: "T.min", _e.Max: "T.max", _e.Mod: "T.truncmod"}


def _atom(x):
    if isinstance(x, _e.Var):
        return x.name_hint, 9
    if isinstance(x, _e.IntImm):
        if x.dtype == "int32":
            return str(x.value), 9
        if x.dtype == "bool":
            return f"T.bool({bool(x.value)})", 9
        return f"T.{x.dtype}({x.value})", 9
    if isinstance(x, _e.FloatImm):
        return f"T.{x.dtype}({x.value!r})", 9
    if isinstance(x, _e.StringImm):
        return repr(x.value), 9
    return None


def _text(x):
    """(text, precedence) of an expression."""
    atom = _atom(x)
    if atom is not None:
        return atom
    for node_type, symbol, prec in _INFIX:
        if type(x) is node_type:
            left, lp = _text(x.a)
            right, rp = _text(x.b)
            left = left if lp >= prec else f"({left})"
            right = right if rp > prec else f"({right})"
            return f"{left} {symbol} {right}", prec
    if type(x) in _FUNCS:
        return f"{_FUNCS[type(x)]}({expr_text(x.a)}, {expr_text(x.b)})", 9
    if isinstance(x, _e.Not):
        inner, p = _text(x.a)
        return "not " + (inner if p >= 3 else f"({inner})"), 3
    if isinstance(x, _e.Cast):
        return f'T.Cast("{x.dtype}", {expr_text(x.value)})', 9
    if isinstance(x, _e.Select):
        args = ", ".join(expr_text(v) for v in (x.condition, x.true_value, x.false_value))
        return f"T.Select({args})", 9
    if isinstance(x, _e.Call):
        name = x.op[4:] if x.op.startswith("tir.") else x.op
        return f"T.{name}({', '.join(_arg_text(a) for a in x.args)})", 9
    if isinstance(x, _e.BufferLoad):
        return f"{x.buffer.name}[{', '.join(expr_text(i) for i in x.indices)}]", 9
    if isinstance(x, _e.Let):
        return (f"T.Let({expr_text(x.body)}, where={{{x.var.name_hint}: "
                f"{expr_text(x.value)}}})"), 9
    if isinstance(x, _e.Ramp):
        return f"T.Ramp({expr_text(x.base)}, {expr_text(x.stride)}, {x.lanes})", 9
    if isinstance(x, _e.Broadcast):
        return f"T.Broadcast({expr_text(x.value)}, {x.lanes})", 9
    if isinstance(x, _e.Reduce):
        axes = ", ".join(iv.var.name_hint for iv in x.axis)
        return f"T.reduce_{x.combiner}({expr_text(x.source)}, axis=[{axes}])", 9
    return object.__repr__(x), 9


def _arg_text(a):
    if isinstance(a, _e.PrimExpr):
        return expr_text(a)
    return getattr(a, "name", None) or repr(a)


def expr_text(x):
    """The script-syntax text of a TIR expression: ``expr_text(i * 4 + j) == "i * 4 + j"``."""
    return _text(x)[0]
