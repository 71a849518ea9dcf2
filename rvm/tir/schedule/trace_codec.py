"""Values of trace instructions as Python literals and as JSON.

Attributes are plain values (numbers, strings, lists, tuples) except an
IndexMap (``transform_layout``), which JSON stores as its expressions.
Integer expressions travel as nested lists: ``["//", ["var", 1], 16]`` is
``j // 16`` for the second index; ``["rv", "v4"]`` is a sampled variable.
"""
import json

from rvm.tir import op as _op
from rvm.tir.expr import Add, FloorDiv, FloorMod, IntImm, Max, Min, Mul, Sub, Var
from rvm.tir.index_map import IndexMap

_OPS = {Add: "+", Sub: "-", Mul: "*", FloorDiv: "//", FloorMod: "%", Min: "min", Max: "max"}
_BUILD = {"+": _op.add, "-": _op.subtract, "*": _op.multiply, "//": _op.floordiv,
          "%": _op.floormod, "min": _op.min, "max": _op.max}


def python_literal(value):
    """Python source of an attribute value (strings in double quotes, as TVM prints them)."""
    if isinstance(value, str):
        return json.dumps(value)
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)
    if isinstance(value, IntImm):
        return repr(value.value)
    if isinstance(value, list):
        return "[" + ", ".join(python_literal(v) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(python_literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{python_literal(k)}: {python_literal(v)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, IndexMap):
        return value.lambda_text()
    raise TypeError(f"cannot print {type(value).__name__} {value!r} in a trace")


def expr_to_json(expr, names, variables=None):
    """An integer expression as nested lists; ``names`` names sampled variables,
    ``variables`` ({id(var): position}) numbers an index map's variables."""
    if isinstance(expr, IntImm):
        return expr.value
    if isinstance(expr, Var):
        if variables is not None and id(expr) in variables:
            return ["var", variables[id(expr)]]
        for rv, name in names.items():
            if rv is expr:
                return ["rv", name]
        raise ValueError(f"expression variable {expr.name_hint!r} is not a sampled variable")
    op = _OPS.get(type(expr))
    if op is None:
        raise ValueError(f"cannot serialize {type(expr).__name__} {expr!r}; expected integer "
                         "arithmetic")
    return [op, expr_to_json(expr.a, names, variables), expr_to_json(expr.b, names, variables)]


def expr_from_json(obj, rvs, variables=None, dtype="int32"):
    """The expression of ``expr_to_json``'s output (ValueError when malformed)."""
    if isinstance(obj, bool) or obj is None:
        raise ValueError(f"bad expression in trace JSON: {obj!r}")
    if isinstance(obj, int):
        return _op.const(obj, dtype)
    if isinstance(obj, list) and len(obj) == 2 and obj[0] == "rv":
        if obj[1] not in rvs:
            raise ValueError(f"trace JSON uses {obj[1]!r} before defining it")
        return rvs[obj[1]]
    if isinstance(obj, list) and len(obj) == 2 and obj[0] == "var":
        if variables is None or not isinstance(obj[1], int) or not 0 <= obj[1] < len(variables):
            raise ValueError(f"bad index variable in trace JSON: {obj!r}")
        return variables[obj[1]]
    if isinstance(obj, list) and len(obj) == 3 and obj[0] in _BUILD:
        a = expr_from_json(obj[1], rvs, variables, dtype)
        b = expr_from_json(obj[2], rvs, variables, dtype)
        return _BUILD[obj[0]](a, b)
    raise ValueError(f"bad expression in trace JSON: {obj!r}")


def attr_to_json(value):
    """An attribute as JSON (tuples become lists, an IndexMap an object)."""
    if isinstance(value, IndexMap):
        positions = {id(v): k for k, v in enumerate(value.initial_indices)}
        return {"index_map": [v.name_hint for v in value.initial_indices],
                "final": [expr_to_json(e, {}, positions) for e in value.final_indices]}
    if isinstance(value, IntImm):
        return value.value
    if isinstance(value, (list, tuple)):
        return [attr_to_json(v) for v in value]
    if isinstance(value, dict):
        return {k: attr_to_json(v) for k, v in value.items()}
    return value


def attr_from_json(kind, position, value):
    """An attribute read back from JSON for attribute ``position`` of ``kind``."""
    if isinstance(value, dict) and "index_map" in value:
        names = value["index_map"]
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ValueError(f"bad index map in trace JSON: {value!r}")
        variables = [Var(n, "int64") for n in names]
        final = [expr_from_json(e, {}, variables, "int64") for e in value.get("final", [])]
        return IndexMap(variables, final)
    attr_names = [p.name for p in kind.params if p.role == "attr"]
    if attr_names[position:position + 1] == ["buffer"] and isinstance(value, list):
        return tuple(value)
    return value
