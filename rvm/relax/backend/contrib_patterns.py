"""The patterns of the example codegens ``ccompiler`` (C source) and ``examplejson``
(a JSON-like graph run by its own runtime module): float32 tensors of static shape.

``ccompiler`` takes add/subtract/multiply/divide of two same-shaped tensors,
``relu``, and 2-D ``matmul``; ``examplejson`` takes the same-shaped add,
subtract and multiply.
"""
from rvm.relax.backend.pattern_registry import register_patterns
from rvm.relax.dpl.pattern import is_op, wildcard
from rvm.relax.struct_info import TensorStructInfo

ELEMENTWISE = ("add", "subtract", "multiply", "divide")


def _static_shape(expr):
    sinfo = expr.struct_info_
    if not isinstance(sinfo, TensorStructInfo) or str(sinfo.dtype) != "float32":
        return None
    values = getattr(sinfo.shape, "values", None)
    if values is None or not all(isinstance(getattr(d, "value", None), int) for d in values):
        return None
    return tuple(d.value for d in values)


def same_static_shapes(context):
    """Check: every operand and the result are float32 tensors of one static shape."""
    call = context.matched_expr
    shapes = {_static_shape(e) for e in (call, *call.args)}
    return len(shapes) == 1 and None not in shapes


def static_matmul(context):
    """Check: a float32 (m, k) x (k, n) matmul of static shapes."""
    call = context.matched_expr
    shapes = [_static_shape(e) for e in (call, *call.args)]
    return all(s is not None and len(s) == 2 for s in shapes)


def _binary(compiler, name):
    return (f"{compiler}.{name}", is_op(f"relax.{name}")(wildcard(), wildcard()), {},
            same_static_shapes)


register_patterns([_binary("ccompiler", name) for name in ELEMENTWISE] + [
    ("ccompiler.relu", is_op("relax.nn.relu")(wildcard()), {}, same_static_shapes),
    ("ccompiler.matmul", is_op("relax.matmul")(wildcard(), wildcard()), {}, static_matmul),
])
register_patterns([_binary("examplejson", name) for name in ("add", "subtract", "multiply")])
