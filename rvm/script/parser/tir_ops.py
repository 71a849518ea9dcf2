"""TIR arithmetic in scripts: ``a + b``, ``i // 4``, ``x < y``, ``a and b``.

Operands that are already expressions of one dtype build exactly the node
written, so printed text reads back to the same IR; Python numbers take the
other operand's dtype and mixed dtypes promote through ``rvm.tir.op``.
"""
import ast

from rvm.ir.expr import PrimExpr
from rvm.tir import expr as _e
from rvm.tir import op as _op

_NODES = {
    ast.Add: (_e.Add, _op.add), ast.Sub: (_e.Sub, _op.subtract),
    ast.Mult: (_e.Mul, _op.multiply), ast.FloorDiv: (_e.FloorDiv, _op.floordiv),
    ast.Mod: (_e.FloorMod, _op.floormod),
    ast.Eq: (_e.EQ, _op.equal), ast.NotEq: (_e.NE, _op.not_equal), ast.Lt: (_e.LT, _op.less),
    ast.LtE: (_e.LE, _op.less_equal), ast.Gt: (_e.GT, _op.greater),
    ast.GtE: (_e.GE, _op.greater_equal),
    ast.And: (_e.And, _op.logical_and), ast.Or: (_e.Or, _op.logical_or),
    ast.BitAnd: (_e.And, _op.logical_and), ast.BitOr: (_e.Or, _op.logical_or),
}


def build_binop(parser, node, op, lhs, rhs):
    """The TIR node for ``lhs <op> rhs`` (a ParseError at ``node`` when unsupported)."""
    for side in (lhs, rhs):
        if not isinstance(side, (PrimExpr, bool, int, float)):
            raise parser.error(node, f"cannot combine {type(side).__name__} with a TIR "
                                     "expression; expected numbers or TIR expressions")
    if op is ast.Div:
        a, b = _op.match_dtypes(lhs, rhs)
        if a.dtype.is_float:
            return _e.Div(a, b)
        raise parser.error(node, "'/' on integers is ambiguous; use '//' (floor division) or "
                                 "T.truncdiv")
    if op is ast.Pow:
        return _op.power(lhs, rhs)
    if op not in _NODES:
        raise parser.error(node, f"unsupported operator {op.__name__} on TIR expressions")
    node_type, folded = _NODES[op]
    if isinstance(lhs, PrimExpr) and isinstance(rhs, PrimExpr) and lhs.dtype == rhs.dtype:
        return node_type(lhs, rhs)
    if isinstance(lhs, PrimExpr) != isinstance(rhs, PrimExpr):
        expr, other = (lhs, rhs) if isinstance(lhs, PrimExpr) else (rhs, lhs)
        converted = _op.convert(other, expr.dtype)
        if converted.dtype == expr.dtype and op not in (ast.And, ast.Or):
            a, b = (expr, converted) if expr is lhs else (converted, expr)
            return node_type(a, b)
    return folded(lhs, rhs)
