"""The ``R.`` names: struct info annotations, value constructors and the calling operators.

High-level operators (``R.add``, ``R.nn.relu``...) are not listed here: any
name registered in the Relax operator registry as ``relax.<name>`` parses,
through its Python constructor when ``rvm.relax.op`` has one, else as a
plain Call with the keyword arguments as attributes.
"""
import importlib

from rvm.ir.expr import GlobalVar, PrimExpr, RelaxExpr
from rvm.relax import expr as _r
from rvm.relax import struct_info as _si
from rvm.relax.op import base as _base
from rvm.relax.op.registry import Op
from rvm.relax.te_bridge import lower_te_call
from rvm.script.parser.core import Builtin


class MatchCastSpec:
    """``R.match_cast(value, sinfo)``: becomes a MatchCast binding."""

    def __init__(self, value, sinfo):
        self.value = value
        self.sinfo = sinfo


class Marker:
    """Statement-only builtins (``R.output``, ``R.dataflow``, ``R.func_attr``)."""

    def __init__(self, kind, node, args, kwargs):
        self.kind = kind
        self.node = node
        self.args = args
        self.kwargs = kwargs


def as_sinfo(parser, value, node):
    """``value`` as a StructInfo: bare ``R.Tensor``/``R.Object``... mean "any such value"."""
    if isinstance(value, _si.StructInfo):
        return value
    if isinstance(value, Builtin) and value.name in _BARE:
        return _BARE[value.name]()
    raise parser.error(node, f"expected a struct info annotation such as "
                             f"R.Tensor((n, 4), \"float32\"), got {type(value).__name__}")


_BARE = {
    "Tensor": _si.TensorStructInfo, "Object": _si.ObjectStructInfo, "Shape": _si.ShapeStructInfo,
    "Prim": _si.PrimStructInfo, "Tuple": lambda: _si.TupleStructInfo([]),
    "Callable": lambda: _si.FuncStructInfo.opaque_func(purity=False),  # TVM: opaque is impure
}


def to_relax(parser, value, node):
    """A Relax expression from a parsed value (tuples, scalars, strings are converted)."""
    if isinstance(value, RelaxExpr):
        return value
    if isinstance(value, (tuple, list)):
        return _r.Tuple([to_relax(parser, v, node) for v in value])
    if isinstance(value, (bool, int, float, PrimExpr)):
        return _r.PrimValue(value)
    if isinstance(value, str):
        return _r.StringImm(value)
    raise parser.error(node, f"expected a Relax expression, got {type(value).__name__}")


def _tensor(parser, node, *args, shape=None, dtype=None, ndim=-1):
    args = list(args)
    if args and (isinstance(args[0], (tuple, list)) or isinstance(args[0], RelaxExpr)):
        shape = args.pop(0)
    if args and isinstance(args[0], str):
        dtype = args.pop(0)
    if args:
        raise parser.error(node, "R.Tensor expects (shape, dtype) and ndim=; got extra "
                                 f"argument {args[0]!r}")
    if isinstance(shape, (tuple, list)):
        shape = [parser.dim(d, node) for d in shape]
    return _si.TensorStructInfo(shape, dtype, ndim)


def _shape_sinfo(parser, node, values=None, ndim=-1):
    if values is not None:
        values = [parser.dim(d, node) for d in values]
    return _si.ShapeStructInfo(values, ndim)


def _prim_sinfo(parser, node, dtype=None, value=None):
    if isinstance(value, str):
        value = parser.dim(value, node)
    return _si.PrimStructInfo(dtype, value)


def _tuple_sinfo(parser, node, *fields):
    if len(fields) == 1 and isinstance(fields[0], (list, tuple)):
        fields = fields[0]
    return _si.TupleStructInfo([as_sinfo(parser, f, node) for f in fields])


def _callable(parser, node, params=None, ret=None, purity=None):
    if purity is None:  # as TVM: an opaque function is impure unless stated, a typed one pure
        purity = params is not None
    ret = as_sinfo(parser, ret, node) if ret is not None else _si.ObjectStructInfo()
    if params is not None:
        params = [as_sinfo(parser, p, node) for p in params]
    return _si.FuncStructInfo(params, ret, purity)


def _out_sinfo(parser, node, out_sinfo):
    if isinstance(out_sinfo, (list, tuple)):
        return [as_sinfo(parser, s, node) for s in out_sinfo]
    return as_sinfo(parser, out_sinfo, node)


def _args(parser, node, args):
    if isinstance(args, (tuple, list)):
        return [to_relax(parser, a, node) for a in args]
    return to_relax(parser, args, node)


def _call_tir(parser, node, func, args, out_sinfo=None, tir_vars=None):
    if not isinstance(func, GlobalVar):
        raise parser.error(node, "R.call_tir expects a prim_func of the module (cls.name) first")
    if out_sinfo is None:
        raise parser.error(node, "R.call_tir needs out_sinfo=R.Tensor(...)")
    if isinstance(tir_vars, (tuple, list)):
        tir_vars = _r.ShapeExpr([parser.dim(d, node) for d in tir_vars])
    return _base.call_tir(func, _args(parser, node, args), _out_sinfo(parser, node, out_sinfo),
                          tir_vars)


def _call_tir_inplace(parser, node, func, args, inplace_indices=None, out_sinfo=None,
                      tir_vars=None):
    if not isinstance(func, GlobalVar):
        raise parser.error(node, "R.call_tir_inplace expects a prim_func of the module "
                                 "(cls.name) first")
    if inplace_indices is None or out_sinfo is None:
        raise parser.error(node, "R.call_tir_inplace needs inplace_indices=[...] and "
                                 "out_sinfo=R.Tensor(...)")
    if isinstance(tir_vars, (tuple, list)):
        tir_vars = _r.ShapeExpr([parser.dim(d, node) for d in tir_vars])
    return _base.call_tir_inplace(func, _args(parser, node, args), inplace_indices,
                                  _out_sinfo(parser, node, out_sinfo), tir_vars)


def _emit_te(parser, node, func, *args, primfunc_name_hint=None, **kwargs):
    """``R.emit_te(te_func, *args)``: the kernel ``te_func`` makes from the arguments joins the
    module (as BlockBuilder.emit_te adds it), and the value is its call_tir."""
    if not callable(func):
        raise parser.error(node, f"R.emit_te expects a TE function such as topi.add first, got "
                                 f"{type(func).__name__}")
    prim_func, relax_args, out_sinfo, tir_vars = lower_te_call(parser.norm, func, args, kwargs)
    name = primfunc_name_hint or getattr(func, "__name__", "")
    gvar = parser.add_kernel(prim_func, name if name.isidentifier() else "te_func", node)
    return _base.call_tir(gvar, relax_args, out_sinfo, tir_vars=tir_vars or None)


def _call_dps_packed(parser, node, func, args, out_sinfo=None):
    if out_sinfo is None:
        raise parser.error(node, "R.call_dps_packed needs out_sinfo=R.Tensor(...)")
    return _base.call_dps_packed(func, _args(parser, node, args),
                                 _out_sinfo(parser, node, out_sinfo))


def _sinfo_args(parser, node, sinfo_args):
    if sinfo_args is None:
        return None
    if isinstance(sinfo_args, (list, tuple)):
        return [as_sinfo(parser, s, node) for s in sinfo_args]
    return as_sinfo(parser, sinfo_args, node)


def call_packed(parser, node, func, *args, sinfo_args=None):
    """``R.call_packed(func, *args, sinfo_args=...)``: a call of the packed function ``func``."""
    args = [to_relax(parser, a, node) for a in args]
    return _base.call_packed(func, *args, sinfo_args=_sinfo_args(parser, node, sinfo_args))


def _call_pure_packed(parser, node, func, *args, sinfo_args=None):
    args = [to_relax(parser, a, node) for a in args]
    return _base.call_pure_packed(func, *args, sinfo_args=_sinfo_args(parser, node, sinfo_args))


def _const(parser, node, value, dtype=None):
    return _r.const(value, dtype)


def _shape(parser, node, values):
    return _r.ShapeExpr([parser.dim(d, node) for d in values])


def _marker(kind):
    return Builtin(kind, lambda parser, node, *args, **kwargs: Marker(kind, node, args, kwargs))


def build_table():
    """{dotted name: Builtin} of the ``R.`` namespace."""
    table = {
        "Tensor": Builtin("Tensor", _tensor),
        "Shape": Builtin("Shape", _shape_sinfo),
        "Prim": Builtin("Prim", _prim_sinfo),
        "Tuple": Builtin("Tuple", _tuple_sinfo),
        "Object": Builtin("Object", lambda p, n: _si.ObjectStructInfo()),
        "Callable": Builtin("Callable", _callable),
        "call_tir": Builtin("call_tir", _call_tir),
        "call_tir_inplace": Builtin("call_tir_inplace", _call_tir_inplace),
        "call_dps_packed": Builtin("call_dps_packed", _call_dps_packed),
        "emit_te": Builtin("emit_te", _emit_te),
        "call_packed": Builtin("call_packed", call_packed),
        "call_pure_packed": Builtin("call_pure_packed", _call_pure_packed),
        "const": Builtin("const", _const),
        "shape": Builtin("shape", _shape),
        "prim_value": Builtin("prim_value", lambda p, n, v: _r.PrimValue(v)),
        "str": Builtin("str", lambda p, n, v: _r.StringImm(v)),
        "dtype": Builtin("dtype", lambda p, n, v: _r.DataTypeImm(v)),
        "ExternFunc": Builtin("ExternFunc", lambda p, n, v, sinfo=None: _r.ExternFunc(
            v, as_sinfo(p, sinfo, n) if sinfo is not None else None)),
        "tuple": Builtin("tuple", lambda p, n, *fields: _r.Tuple(
            [to_relax(p, f, n) for f in fields])),
        "match_cast": Builtin("match_cast", lambda p, n, value, sinfo: MatchCastSpec(
            to_relax(p, value, n), as_sinfo(p, sinfo, n))),
    }
    for kind in ("output", "dataflow", "func_attr", "function"):
        table[kind] = _marker(kind)
    return table


RELAX_TABLE = build_table()


# Operators whose constructor in rvm.relax.op has another name than TVM's ``relax.op.<name>``.
_CONSTRUCTOR_NAMES = {"memory.alloc_tensor": "memory.alloc_tensor_in_storage"}


def _constructor(name):
    """The Python constructor of operator ``relax.<name>`` in rvm.relax.op, if there is one."""
    try:
        obj = importlib.import_module("rvm.relax.op")
    except ImportError:
        return None
    for part in _CONSTRUCTOR_NAMES.get(name, name).split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj if callable(obj) else None


def operator_builtin(name):
    """The builtin of a registered high-level operator ``relax.<name>``, or of a composite
    operator of ``rvm.relax.op`` (``R.linear``); None if unknown."""
    constructor = _constructor(name)
    try:
        op = Op.get(f"relax.{name}")
    except ValueError:
        if constructor is not None and getattr(constructor, "composite", False):
            return Builtin(name, lambda parser, node, *args, **kwargs: constructor(
                *[to_relax(parser, a, node) if isinstance(a, (RelaxExpr, tuple)) else a
                  for a in args], **kwargs))
        return None

    def build(parser, node, *args, sinfo_args=None, **attrs):
        """Builds the builtin's value from the evaluated arguments."""
        args = [to_relax(parser, a, node) if isinstance(a, (RelaxExpr, tuple)) else a
                for a in args]
        if constructor is not None and sinfo_args is None:
            try:
                made = constructor(*args, **attrs)
            except TypeError as err:
                if op.get_attr("attr_defaults") is not None or attrs:
                    # an operator with declared attributes prints what its builder takes;
                    # keywords of one without (TVM's parameter names) only its builder reads
                    text = str(err) if str(err).startswith("relax.") else f"R.{name}: {err}"
                    raise parser.error(node, text) from None
                made = None  # arguments as the Call stores them (printed text)
            if isinstance(made, _r.Call) and made.op is op:
                return made
        args = [to_relax(parser, a, node) for a in args]
        sinfos = _sinfo_args(parser, node, sinfo_args)
        if isinstance(sinfos, _si.StructInfo):
            sinfos = [sinfos]
        return _r.Call(op, args, attrs or None, sinfos or ())

    return Builtin(name, build)
