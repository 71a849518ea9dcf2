"""The ``R.`` names as Python objects, for IR built outside a decorated function.

TVM's ``R.add`` *is* ``relax.op.add``: every operator of the Relax registry
(``relax.<name>``) and every composite operator is reached on ``R`` as the
very constructor of ``rvm.relax.op`` (``R.add is relax.op.add``), and its
sub-namespaces as the operator packages (``R.nn is relax.op.nn``). The value
helpers here (``R.const``, ``R.shape``, ``R.prim_value``...) build what the
parser builds for the same text. Statement-only names (``R.output``,
``R.dataflow``, ``R.func_attr``, ``R.emit_te``) describe a function body, so
outside one they raise an error saying where they belong.
"""
import importlib

from rvm.ir.expr import PrimExpr, RelaxExpr
from rvm.relax import expr as _r
from rvm.relax import struct_info as _si
from rvm.relax.op.registry import list_op_names
from rvm.script.parser.relax_builtins import MatchCastSpec, operator_builtin, _constructor


def const(value, dtype=None):
    """``R.const(value, dtype)``: a Constant (``relax.const``)."""
    return _r.const(value, dtype)


def shape(value):
    """``R.shape([n, 4])``: a ShapeExpr of ints and int64 expressions."""
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"R.shape expects a list of dimensions, got {type(value).__name__}")
    return _r.ShapeExpr(list(value))


def prim_value(value):
    """``R.prim_value(v)``: a PrimValue of an int, float or PrimExpr."""
    if isinstance(value, bool) or not isinstance(value, (int, float, PrimExpr)):
        raise TypeError(f"R.prim_value expects an int, float or PrimExpr, got "
                        f"{type(value).__name__}")
    return _r.PrimValue(value)


def str_imm(value):
    """``R.str("text")``: a StringImm."""
    return _r.StringImm(value)


def dtype(value):
    """``R.dtype("float32")``: a DataTypeImm."""
    return _r.DataTypeImm(value)


def make_tuple(*fields):
    """``R.tuple(a, b)``: a Tuple of Relax expressions (Python scalars become PrimValues)."""
    return _r.Tuple([_as_expr(f, "R.tuple") for f in fields])


def match_cast(value, struct_info):
    """``R.match_cast(value, sinfo)``: the pair a ``bb.match_cast``/parser binding is made of."""
    if not isinstance(value, RelaxExpr):
        raise TypeError(f"R.match_cast expects a Relax expression first, got "
                        f"{type(value).__name__}")
    if not isinstance(struct_info, _si.StructInfo):
        raise TypeError(f"R.match_cast expects a struct info second, got "
                        f"{type(struct_info).__name__}")
    return MatchCastSpec(value, struct_info)


def _as_expr(value, who):
    if isinstance(value, RelaxExpr):
        return value
    if isinstance(value, (bool, int, float, PrimExpr)):
        return _r.PrimValue(value)
    if isinstance(value, str):
        return _r.StringImm(value)
    raise TypeError(f"{who}: expected a Relax expression, got {type(value).__name__}")


def _body_only(name):
    def refuse(*args, **kwargs):
        raise ValueError(f"R.{name}(...) describes the body of an @R.function and is read by "
                         "the script parser; outside one use the BlockBuilder "
                         f"({_BUILDER_EQUIVALENT[name]})")

    refuse.__name__ = name
    refuse.__doc__ = f"``R.{name}``: only inside an @R.function body (see BlockBuilder)."
    return refuse


_BUILDER_EQUIVALENT = {
    "output": "bb.emit_output", "dataflow": "with bb.dataflow()",
    "func_attr": "bb.function(name, attrs=...)", "emit_te": "bb.emit_te",
}
STATEMENT_ONLY = {name: _body_only(name) for name in _BUILDER_EQUIVALENT}


def operator_object(name):
    """The Python object ``R.<name>`` stands for among the operators: the constructor of
    ``rvm.relax.op`` (``relax.<name>`` registered or composite), an operator sub-namespace
    (``R.nn``), or None."""
    if operator_builtin(name) is not None:
        made = _constructor(name)
        if made is not None:
            return made
    if any(op.startswith(f"relax.{name}.") for op in list_op_names()):
        try:
            return importlib.import_module(f"rvm.relax.op.{name}")
        except ModuleNotFoundError:
            return None
    return None
