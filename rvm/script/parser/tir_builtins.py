"""The ``T.`` names: dtypes, intrinsics, and the markers statements are built from.

Expression builtins return IR (``T.exp(x)`` is a tir.Call). Statement-level
builtins (``T.grid``, ``T.axis.remap``, ``T.match_buffer``, ``T.reads``...)
return small spec objects that the statement parser turns into IR, since
they only make sense in their statement (``for``, ``with``, assignment).
"""
from rvm.ir.expr import PrimExpr
from rvm.runtime.data_type import DataType
from rvm.tir import expr as _e
from rvm.tir import op as _op
from rvm.script.parser.core import Builtin
from rvm.script.parser import tir_intrinsics as _intrin

DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "bfloat16")

INTRINSICS = {name: getattr(_op, name) for name in (
    "exp", "exp2", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "tanh", "sigmoid", "erf",
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh",
    "fabs", "floor", "ceil", "round", "trunc", "isnan", "isinf", "isfinite", "pow",
    "if_then_else",
)}


class Spec:
    """A statement-level builtin's evaluated call: ``kind``, positional ``args``, ``kwargs``."""

    def __init__(self, kind, node, args, kwargs):
        self.kind = kind
        self.node = node
        self.args = args
        self.kwargs = kwargs

    def __repr__(self):
        return f"<T.{self.kind}>"


class VarDecl:
    """``T.int64()``: declares a symbolic variable named by the assignment target."""

    def __init__(self, dtype, size_var=False):
        self.dtype = DataType(dtype)
        self.size_var = size_var

    def make(self, name):
        """The variable this declaration makes, named ``name``."""
        return (_e.SizeVar if self.size_var else _e.Var)(name, self.dtype)


class DTypeAnnotation:
    """``T.int32`` used as a parameter annotation (a scalar parameter)."""

    def __init__(self, dtype):
        self.dtype = DataType(dtype)


def _dtype_builtin(dtype):
    def build(parser, node, value=None, is_size_var=False):
        """Builds the builtin's value from the evaluated arguments."""
        if value is None:
            return VarDecl(dtype, is_size_var)
        if isinstance(value, str):
            value = float(value)
        if isinstance(value, PrimExpr):
            return _op.cast(value, dtype)
        if DataType(dtype).is_float:
            return _e.FloatImm(dtype, float(value))
        if isinstance(value, float) and not value.is_integer():
            raise parser.error(node, f"T.{dtype} expects an integer value, got {value}")
        return _e.IntImm(dtype, int(value))

    return Builtin(dtype, build)


def _spec(kind):
    return Builtin(kind, lambda parser, node, *args, **kwargs: Spec(kind, node, args, kwargs))


def _expr_args(parser, node, args):
    return [a if isinstance(a, PrimExpr) or hasattr(a, "data") else _op.convert(a) for a in args]


def _intrinsic(name, arity):
    fn = INTRINSICS[name]

    def build(parser, node, *args, dtype=None):
        """Builds the builtin's value from the evaluated arguments; ``dtype=`` (which TVM's
        printer may write) must agree with the result's dtype."""
        parser.check_arity(node, f"T.{name}", args, arity)
        value = fn(*_expr_args(parser, node, args))
        if dtype is not None and DataType(dtype) != value.dtype:
            raise parser.error(node, f"T.{name}: dtype={dtype!r} disagrees with the result's "
                                     f"dtype {value.dtype} (the dtype of its arguments)")
        return value

    return Builtin(name, build)


def _intrinsic_call(name):
    return Builtin(name, lambda parser, node, *args: _intrin.make_call(name, args))


def _imm(kind):
    def build(parser, node, dtype, value):
        """``T.IntImm(dtype, value)`` / ``T.FloatImm(dtype, value)``."""
        dtype = DataType(dtype)
        if kind is _e.IntImm and not (dtype.is_int or dtype.is_uint or dtype.is_bool):
            raise parser.error(node, f"T.IntImm expects an integer dtype, got {dtype}")
        if kind is _e.FloatImm and not dtype.is_float:
            raise parser.error(node, f"T.FloatImm expects a float dtype, got {dtype}")
        return kind(dtype, value)

    return Builtin(kind.__name__, build)


def _var(kind):
    def build(parser, node, name, dtype="int32"):
        """``T.Var(name, dtype)``: a variable of the given name and dtype."""
        if not isinstance(name, str):
            raise parser.error(node, f"T.{kind.__name__} expects a name string first, got "
                                     f"{name!r}")
        return kind(name, dtype)

    return Builtin(kind.__name__, build)


def _node(kind):
    def build(parser, node, a, b):
        """The node itself (``T.Add(a, b)``): operands of one dtype, as the node requires."""
        a, b = _op.match_dtypes(a, b)
        return kind(a, b)

    return Builtin(kind.__name__, build)


def _binary(name, node_type, folded):
    def build(parser, node, a, b):
        """Builds the builtin's value from the evaluated arguments."""
        if isinstance(a, PrimExpr) and isinstance(b, PrimExpr) and a.dtype == b.dtype:
            return node_type(a, b)
        return folded(a, b)

    return Builtin(name, build)


def _cast(parser, node, dtype, value):
    """``T.Cast(dtype, value)`` is the Cast node itself (``T.cast(value, dtype)`` folds)."""
    return _e.Cast(dtype, _op.convert(value))


def _select(parser, node, cond, t, f):
    t, f = _op.match_dtypes(t, f)
    return _e.Select(_op.convert(cond), t, f)


def _call_packed(parser, node, name, *args):
    if not isinstance(name, str):
        raise parser.error(node, f"T.call_packed expects the function name (a str) first, "
                                 f"got {type(name).__name__}")
    return _op.call_packed(name, *args)


def _call_extern(parser, node, dtype, name, *args):
    return _op.call_extern(dtype, name, *args)


def _call_intrin(parser, node, dtype, op_name, *args):
    return _op.call_intrin(dtype, op_name, *args)


def _evaluate(parser, node, value):
    return Spec("evaluate", node, (value,), {})


def _ramp(parser, node, base, stride, lanes):
    base, stride = _op.match_dtypes(base, stride)
    return _e.Ramp(base, stride, lanes)


def _broadcast(parser, node, value, lanes):
    return _e.Broadcast(_op.convert(value), lanes)


def _abs(parser, node, x):
    return _op.abs(x)


def build_table():
    """{dotted name: Builtin} of the ``T.`` namespace."""
    table = {dtype: _dtype_builtin(dtype) for dtype in DTYPES}
    for kind in ("grid", "serial", "parallel", "vectorized", "unroll", "thread_binding",
                 "block", "init", "reads", "writes", "where", "block_attr", "func_attr",
                 "match_buffer", "alloc_buffer", "decl_buffer", "allocate", "Buffer",
                 "axis.spatial", "axis.reduce", "axis.scan", "axis.opaque", "axis.remap",
                 "axis.S", "axis.R",
                 "prim_func", "LetStmt", "Assert"):
        table[kind] = _spec(kind)
    table["handle"] = Builtin("handle", lambda p, n, *a, **k: DTypeAnnotation("handle"))
    for name in INTRINSICS:
        table[name] = _intrinsic(name, 3 if name == "if_then_else" else
                                 2 if name == "pow" else 1)
    table["max"] = _binary("max", _e.Max, _op.max)
    table["min"] = _binary("min", _e.Min, _op.min)
    table["truncmod"] = _binary("truncmod", _e.Mod, _op.truncmod)
    table["truncdiv"] = _binary("truncdiv", _e.Div, _op.truncdiv)
    table["Div"] = _binary("Div", _e.Div, _op.div)
    table["floordiv"] = _binary("floordiv", _e.FloorDiv, _op.floordiv)
    table["floormod"] = _binary("floormod", _e.FloorMod, _op.floormod)
    table["Cast"] = Builtin("Cast", _cast)
    table["Select"] = Builtin("Select", _select)
    table["call_packed"] = Builtin("call_packed", _call_packed)
    table["call_extern"] = Builtin("call_extern", _call_extern)
    table["call_intrin"] = Builtin("call_intrin", _call_intrin)
    table["evaluate"] = Builtin("evaluate", _evaluate)
    table["Ramp"] = Builtin("Ramp", _ramp)
    table["Broadcast"] = Builtin("Broadcast", _broadcast)
    table["abs"] = Builtin("abs", _abs)
    table["cast"] = Builtin("cast", lambda parser, node, value, dtype: _op.cast(value, dtype))
    table["max_value"] = Builtin("max_value", lambda parser, node, dtype: _op.max_value(dtype))
    table["min_value"] = Builtin("min_value", lambda parser, node, dtype: _op.min_value(dtype))
    table["Not"] = Builtin("Not", lambda parser, node, a: _e.Not(_op.convert(a)))
    for kind in (_e.IntImm, _e.FloatImm):
        table[kind.__name__] = _imm(kind)
    for kind in (_e.Var, _e.SizeVar):
        table[kind.__name__] = _var(kind)
    table["StringImm"] = Builtin("StringImm", lambda parser, node, value: _e.StringImm(value))
    for name in _intrin.SIGNATURES:
        table[name] = _intrinsic_call(name)
    table["meta_var"] = Builtin("meta_var", lambda parser, node, value: _intrin.meta_var(value))
    for kind in (_e.Add, _e.Sub, _e.Mul, _e.Mod, _e.FloorDiv, _e.FloorMod, _e.Min, _e.Max,
                 _e.EQ, _e.NE, _e.LT, _e.LE, _e.GT, _e.GE, _e.And, _e.Or):
        table.setdefault(kind.__name__, _node(kind))
    return table


TIR_TABLE = build_table()
