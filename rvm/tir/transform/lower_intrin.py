"""LowerIntrin: intrinsics without a direct C/numpy counterpart become simpler expressions.

- integer ``floordiv``/``floormod`` whose operands are provably non-negative
  (loop variables, dimensions) become truncating ``Div``/``Mod``, which C
  computes in one instruction; the others stay and the backends use a
  floor-rounding helper;
- float ``floordiv(a, b)`` becomes ``floor(a / b)`` and ``floormod(a, b)``
  becomes ``a - floor(a / b) * b``;
- ``sigmoid(x)`` becomes ``1 / (1 + exp(-x))`` and ``rsqrt(x)`` becomes ``1 / sqrt(x)``.

    for i in range(8):                    for i in range(8):
        B[i] = A[i // 4]          ->          B[i] = A[i / 4]      (truncating: i >= 0)
"""
from rvm.tir import op as _op
from rvm.tir.arith import Analyzer
from rvm.tir.expr import Call, Div, Mod, Range
from rvm.tir.stmt_functor import StmtExprMutator
from rvm.tir.transform.prim_func_pass import prim_func_pass


def _is_int(dtype):
    return dtype.is_int or dtype.is_uint


class _IntrinLowerer(StmtExprMutator):
    def __init__(self, analyzer):
        self.ana = analyzer

    def visit_for_(self, op):
        if self.ana.const_int_bound(op.extent)[1] is None:
            # A symbolic extent still bounds the loop variable from below.
            self.ana.bind(op.loop_var, Range(op.min, _op.max_value(op.loop_var.dtype)))
        else:
            self.ana.bind(op.loop_var, Range.from_min_extent(op.min, op.extent))
        return self._generic(op)

    def _non_negative(self, a, b):
        alo, _ = self.ana.const_int_bound(a)
        blo, _ = self.ana.const_int_bound(b)
        return alo is not None and alo >= 0 and blo is not None and blo > 0

    def visit_floor_div_(self, op):
        a, b = self.visit_expr(op.a), self.visit_expr(op.b)
        if _is_int(op.dtype):
            if op.dtype.is_uint or self._non_negative(a, b):
                return Div(a, b)
            return op if a is op.a and b is op.b else type(op)(a, b)
        return _op.floor(Div(a, b))

    def visit_floor_mod_(self, op):
        a, b = self.visit_expr(op.a), self.visit_expr(op.b)
        if _is_int(op.dtype):
            if op.dtype.is_uint or self._non_negative(a, b):
                return Mod(a, b)
            return op if a is op.a and b is op.b else type(op)(a, b)
        return _op.subtract(a, _op.multiply(_op.floor(Div(a, b)), b))

    def visit_call_(self, op):
        op = self._generic(op)
        if op.op == "tir.sigmoid":
            x = op.args[0]
            one = _op.const(1, x.dtype)
            return Div(one, _op.add(one, _op.exp(_op.negate(x))))
        if op.op == "tir.rsqrt":
            x = op.args[0]
            return Div(_op.const(1, x.dtype), Call(x.dtype, "tir.sqrt", [x]))
        return op


def lower_intrin(func):
    """``func`` with intrinsics lowered as described in the module docstring."""
    analyzer = Analyzer()
    for buffer in func.buffer_map.values():
        for dim in buffer.shape:
            if hasattr(dim, "name_hint"):
                analyzer.bind(dim, Range(_op.const(0, dim.dtype), _op.max_value(dim.dtype)))
    body = _IntrinLowerer(analyzer).visit(func.body)
    return func if body is func.body else func.with_body(body)


def LowerIntrin():  # noqa: N802  (passes are CamelCase factories)
    """The pass form of ``lower_intrin``."""
    return prim_func_pass(lambda f, mod, ctx: lower_intrin(f), "LowerIntrin")
