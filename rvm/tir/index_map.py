"""IndexMap: a mapping from the indices of a buffer to new indices (a layout transformation).

>>> m = IndexMap.from_func(lambda i, j: (j // 16, i, j % 16))
>>> m
T.index_map(lambda i, j: (j // 16, i, j % 16))
>>> [int(x) for x in m.map_indices([3, 37])]
[2, 3, 5]
"""
import inspect

from rvm.ir.expr import PrimExpr
from rvm.ir.node import Node
from rvm.tir import op as _op
from rvm.tir.arith import simplify
from rvm.tir.expr import Add, FloorDiv, FloorMod, IntImm, Max, Min, Mul, Sub, Var
from rvm.tir.expr_printer import INFIX, BareIntPrinter
from rvm.tir.stmt_functor import substitute


class IndexMap(Node):
    """``final_indices`` as functions of ``initial_indices`` (Vars)."""

    _fields = ("initial_indices", "final_indices")
    _binding_fields = ("initial_indices",)

    def __init__(self, initial_indices, final_indices, inverse_index_map=None, span=None):
        self.initial_indices = tuple(initial_indices)
        self.final_indices = tuple(_op.convert(e) for e in final_indices)
        self.span = span

    @staticmethod
    def from_func(mapping_function, ndim=None, index_dtype="int64"):
        """The IndexMap of a Python function of the indices, e.g. ``lambda i, j: (j, i)``.

        ``ndim`` is needed only when the function takes ``*args``.
        """
        params = inspect.signature(mapping_function).parameters.values()
        names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                      p.POSITIONAL_OR_KEYWORD)]
        if any(p.kind == p.VAR_POSITIONAL for p in params):
            if ndim is None:
                raise ValueError("IndexMap.from_func: a function taking *args needs ndim")
            names = [f"i{k}" for k in range(ndim)]
        elif ndim is not None and ndim != len(names):
            raise ValueError(f"IndexMap.from_func: the function takes {len(names)} indices, "
                             f"expected {ndim}")
        variables = [Var(name, index_dtype) for name in names]
        result = mapping_function(*variables)
        if isinstance(result, (PrimExpr, int)):
            result = [result]
        return IndexMap(variables, [_op.convert(e, index_dtype) for e in result])

    @property
    def ndim(self):
        return len(self.initial_indices)

    def map_indices(self, indices):
        """The final indices for the given initial indices (simplified)."""
        if len(indices) != len(self.initial_indices):
            raise ValueError(f"index map takes {len(self.initial_indices)} indices, got "
                             f"{len(indices)}")
        table = {}
        for var, value in zip(self.initial_indices, indices):
            table[id(var)] = _op.cast(_op.convert(value, var.dtype), var.dtype)
        return [simplify(substitute(e, lambda v: table.get(id(v)))) for e in self.final_indices]

    def with_dtype(self, dtype):
        """This map over indices of ``dtype`` (its expressions rebuilt in that dtype)."""
        if all(v.dtype == dtype for v in self.initial_indices):
            return self
        variables = [Var(v.name_hint, dtype) for v in self.initial_indices]
        table = {id(old): new for old, new in zip(self.initial_indices, variables)}
        return IndexMap(variables, [_rebuild(e, table, dtype) for e in self.final_indices])

    def as_function(self):
        """A Python function computing the final indices from the initial ones."""

        def apply(*indices):
            return self.map_indices(indices)

        return apply

    def lambda_text(self):
        """``lambda i, j: (j, i)``: the map as Python source."""
        names = [v.name_hint for v in self.initial_indices]
        body = ", ".join(index_expr_text(e) for e in self.final_indices)
        if len(self.final_indices) == 1:
            body += ","
        return f"lambda {', '.join(names)}: ({body})"

    def __repr__(self):
        return f"T.index_map({self.lambda_text()})"


_BUILDERS = {Add: _op.add, Sub: _op.subtract, Mul: _op.multiply, FloorDiv: _op.floordiv,
             FloorMod: _op.floormod, Min: _op.min, Max: _op.max}


def _rebuild(expr, table, dtype):
    """An index expression rebuilt over the variables of ``table`` with constants of ``dtype``."""
    if isinstance(expr, IntImm):
        return _op.const(expr.value, dtype)
    if isinstance(expr, Var):
        return table.get(id(expr), expr)
    build = _BUILDERS.get(type(expr))
    if build is None:
        raise ValueError(f"cannot change the dtype of {type(expr).__name__} {expr!r} in an index "
                         "map; expected integer arithmetic")
    return build(_rebuild(expr.a, table, dtype), _rebuild(expr.b, table, dtype))


class _IndexPrinter(BareIntPrinter):
    """Index expressions as Python source: integer arithmetic only, ``tir.min``/``tir.max``,
    variables named by ``names`` ({id(var): name}) or their name_hint."""

    infix = {k: INFIX[k] for k in (Add, Sub, Mul, FloorDiv, FloorMod)}
    calls = {Min: "tir.min", Max: "tir.max"}

    def __init__(self, names):
        self.names = names

    def var_name(self, var):
        return self.names.get(id(var), var.name_hint)

    def text(self, x):
        if type(x) in self.infix or type(x) in self.calls or isinstance(x, (IntImm, Var)):
            return super().text(x)
        raise ValueError(f"cannot print {type(x).__name__} {x!r} as an index expression; "
                         "expected integers, variables, +, -, *, //, %, min and max")


def index_expr_text(expr, names=None):
    """Python source of an integer index expression (+, -, *, //, %, min, max); variables
    are named by ``names`` ({id(var): name}) or their name_hint."""
    return _IndexPrinter(names or {})(expr)
