"""Evaluating integer index expressions on every point of a grid of loop variables (numpy).

Used where an exact answer over a small constant iteration space is simpler than a
symbolic proof: is a layout map a bijection, does a loop nest visit each output once.

>>> from rvm.tir.expr import Var
>>> i, j = Var("i"), Var("j")
>>> values = eval_on_grid([i * 4 + j, j], [(i, 3), (j, 4)])
>>> [v.tolist() for v in values][1][0]
[0, 1, 2, 3]
"""
import numpy as np

from rvm.tir.expr import Add, Cast, FloorDiv, FloorMod, IntImm, Max, Min, Mul, Sub, Var

GRID_LIMIT = 1 << 22
_NP_OPS = {Add: np.add, Sub: np.subtract, Mul: np.multiply, FloorDiv: np.floor_divide,
           FloorMod: np.mod, Min: np.minimum, Max: np.maximum}


class NotEvaluable(ValueError):
    """The expression uses something other than integer arithmetic on the grid's variables."""


def _eval(expr, env):
    if isinstance(expr, IntImm):
        return np.int64(expr.value)
    if isinstance(expr, Var):
        if id(expr) not in env:
            raise NotEvaluable(f"variable {expr.name_hint!r} is not a grid variable")
        return env[id(expr)]
    if isinstance(expr, Cast) and expr.dtype.is_int and expr.value.dtype.is_int:
        return _eval(expr.value, env)
    op = _NP_OPS.get(type(expr))
    if op is None:
        raise NotEvaluable(f"cannot evaluate {type(expr).__name__} on a grid")
    return op(_eval(expr.a, env), _eval(expr.b, env))


def eval_on_grid(exprs, axes):
    """The value of each expression at every point of the grid ``axes`` ([(var, extent)]),
    as int64 arrays of the grid's shape. NotEvaluable for other expressions, ValueError
    for a grid larger than GRID_LIMIT points."""
    shape = [int(extent) for _, extent in axes]
    if int(np.prod(shape, dtype=np.int64)) > GRID_LIMIT:
        raise ValueError(f"grid of {shape} exceeds {GRID_LIMIT} points")
    grids = np.indices(shape, dtype=np.int64) if shape else np.zeros((0,), dtype=np.int64)
    env = {id(var): grids[k] for k, (var, _) in enumerate(axes)}
    return [np.broadcast_to(_eval(e, env), tuple(shape)) for e in exprs]


def is_injective_on_grid(exprs, axes):
    """Whether distinct grid points give distinct tuples of values (None if unknown)."""
    try:
        values = eval_on_grid(exprs, axes)
    except (NotEvaluable, ValueError):
        return None
    if not values:
        return int(np.prod([int(e) for _, e in axes], dtype=np.int64)) <= 1
    stacked = np.stack([v.reshape(-1) for v in values], axis=1)
    return np.unique(stacked, axis=0).shape[0] == stacked.shape[0]
