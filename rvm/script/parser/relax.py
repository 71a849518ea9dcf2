"""The ``R`` namespace of the script: ``from rvm.script import relax as R``.

``@R.function`` parses a Relax function from its source. ``R.Tensor``,
``R.Tuple``, ``R.Shape``, ``R.Object``, ``R.Prim`` and ``R.Callable`` are
annotations; the parser reads them from the source. Called from Python they
return the StructInfo they denote, as in TVM; a string dimension is a
symbolic int64 variable (the same name is the same variable within one
call, and expressions such as ``"n * 2"`` are allowed):

>>> from rvm import relax
>>> from rvm.script import relax as R
>>> x = relax.Var("x", R.Tensor(("n", 4), "float32"))
>>> x.struct_info
R.Tensor((n, 4), dtype="float32")
>>> R.Tuple(R.Tensor((2,), "int32"), R.Prim("int64"))
R.Tuple(R.Tensor((2,), dtype="int32"), R.Prim("int64"))

The operators are the constructors of ``rvm.relax.op`` themselves, as in TVM
(``R.add is relax.op.add``); the value helpers (``R.const``, ``R.shape``,
``R.call_packed``...) live in ``relax_values``:

>>> from rvm.relax import op
>>> R.add is op.add, R.nn is op.nn
(True, True)
"""
import ast
import operator
import sys

from rvm.ir.expr import PrimExpr
from rvm.relax import struct_info as _si
from rvm.relax import expr as _expr
from rvm.relax.op import base as _base
from rvm.script._decorators import function_decorator, frame_depth_env
from rvm.script.parser import relax_parser as _relax_parser
from rvm.script.parser import relax_values as _values
from rvm.tir.expr import Var as _TirVar


def function(func=None, **options):
    """Decorator: the relax Function of a Relax function (``private=True``, ``pure=False``)."""
    return function_decorator("function", func, options, frame_depth_env(1))


_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}


class _Dims:
    """Turns the dimensions of one annotation into ints and int64 PrimExprs."""

    def __init__(self, who):
        self.who = who
        self.vars = {}

    def dim(self, value):
        if isinstance(value, str):
            try:
                return self._eval(ast.parse(value.strip(), mode="eval").body, value)
            except SyntaxError:
                raise ValueError(f"{self.who}: bad dimension {value!r}; expected a name or an "
                                 "integer expression such as \"n * 2\"") from None
        if isinstance(value, bool) or not isinstance(value, (int, PrimExpr)):
            raise TypeError(f"{self.who}: dimensions must be ints, names or int64 expressions, "
                            f"got {value!r}")
        return value

    def _eval(self, node, text):
        if isinstance(node, ast.Name):
            return self.vars.setdefault(node.id, _TirVar(node.id, "int64"))
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            return _BINOPS[type(node.op)](self._eval(node.left, text),
                                          self._eval(node.right, text))
        raise ValueError(f"{self.who}: bad dimension {text!r}; expected names, integers and "
                         "+ - * // %")


def Tensor(shape=None, dtype=None, ndim=-1):  # noqa: N802  (TVM's name)
    """``TensorStructInfo``: ``R.Tensor((n, 4), "float32")``, ``R.Tensor("float32",
    ndim=2)``, ``R.Tensor()`` (any tensor)."""
    if isinstance(shape, str) and dtype is None:
        shape, dtype = None, shape
    if isinstance(shape, (tuple, list)):
        dims = _Dims("R.Tensor")
        shape = [dims.dim(d) for d in shape]
    return _si.TensorStructInfo(shape, dtype, ndim)


def Shape(values=None, ndim=-1):  # noqa: N802  (TVM's name)
    """``ShapeStructInfo``: ``R.Shape([n, 4])`` or ``R.Shape(ndim=2)``."""
    if values is not None:
        dims = _Dims("R.Shape")
        values = [dims.dim(d) for d in values]
    return _si.ShapeStructInfo(values, ndim)


def Prim(dtype=None, value=None):  # noqa: N802  (TVM's name)
    """``PrimStructInfo``: ``R.Prim("int64")`` or ``R.Prim(value="n")``."""
    if isinstance(value, str):
        value = _Dims("R.Prim").dim(value)
    return _si.PrimStructInfo(dtype, value)


def Tuple(*fields):  # noqa: N802  (TVM's name)
    """``TupleStructInfo``: ``R.Tuple(R.Tensor(...), R.Prim("int64"))`` or of a list."""
    if len(fields) == 1 and isinstance(fields[0], (list, tuple)):
        fields = fields[0]
    return _si.TupleStructInfo([_as_sinfo(f, "R.Tuple") for f in fields])


def Object():  # noqa: N802  (TVM's name)
    """``ObjectStructInfo``: any value."""
    return _si.ObjectStructInfo()


def Callable(params=None, ret=None, purity=None):  # noqa: N802  (TVM's name)
    """``FuncStructInfo``: ``R.Callable([R.Tensor(...)], R.Tensor(...))``; params None means
    opaque. Purity not given: pure with params, impure when opaque, as in TVM."""
    if purity is None:
        purity = params is not None
    ret = _as_sinfo(ret, "R.Callable") if ret is not None else _si.ObjectStructInfo()
    if params is not None:
        params = [_as_sinfo(p, "R.Callable") for p in params]
    return _si.FuncStructInfo(params, ret, purity)


_BARE = {Tensor: Tensor, Shape: Shape, Prim: Prim, Object: Object, Tuple: Tuple,
         Callable: Callable}


def _as_sinfo(value, who):
    if isinstance(value, _si.StructInfo):
        return value
    if callable(value) and value in _BARE:  # bare R.Tensor / R.Object: any such value
        return value()
    raise TypeError(f"{who}: expected a struct info such as R.Tensor((n, 4), \"float32\"), got "
                    f"{type(value).__name__}")


# Names whose Python object is not a constructor of rvm.relax.op of the same name.
_VALUES = {
    "const": _values.const, "shape": _values.shape, "prim_value": _values.prim_value,
    "str": _values.str_imm, "dtype": _values.dtype, "tuple": _values.make_tuple,
    "match_cast": _values.match_cast, "ExternFunc": _expr.ExternFunc,
    "call_packed": _base.call_packed, **_values.STATEMENT_ONLY,
}


def __getattr__(name):
    """``R.add``, ``R.nn``, ``R.const``...: operators and value helpers (module docstring)."""
    if name in _VALUES:
        return _VALUES[name]
    found = None if name.startswith("_") else _values.operator_object(name)
    if found is None:
        raise AttributeError(f"module 'rvm.script.relax' has no attribute {name!r}; R has no "
                             "such operator, type or helper")
    return found


def __dir__():
    names = set(globals()) | set(_VALUES)
    names.update(op[len("relax."):].split(".")[0] for op in _values.list_op_names()
                 if op.startswith("relax."))
    return sorted(n for n in names if n == "__doc__" or not n.startswith("_"))


_relax_parser.register_r_namespace(sys.modules[__name__])
