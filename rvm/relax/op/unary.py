"""Elementwise unary operators: the result has the operand's shape (and dtype, except for the
predicates ``isnan``/``isinf``/``isfinite``, which give bool); also ``clip`` and ``astype``.

>>> from rvm.relax.expr import Var
>>> from rvm.relax.struct_info import TensorStructInfo
>>> exp(Var("x", TensorStructInfo((2,), "float32"))).op.name
'relax.exp'
"""
from rvm.ir.expr import RelaxExpr
from rvm.relax.expr import Call, PrimValue
from rvm.relax.op.infer_util import check_arity, tensor_arg
from rvm.relax.op.registry import REQUIRED, Op, register_op
from rvm.relax.struct_info import PrimStructInfo, TensorStructInfo
from rvm.runtime.data_type import DataType

# what each operator accepts: any dtype, float, bool or int (TVM's checks)
_ACCEPTS = {
    "any": lambda dt: True,
    "float": lambda dt: dt.is_float,
    "bool": lambda dt: dt.is_bool,
    "int": lambda dt: dt.is_int or dt.is_uint,
}


def make_unary(op_name, py_name, doc, float_only=False, accepts=None, out_dtype=None):
    """Registers the elementwise operator ``op_name`` and returns its constructor.

    ``accepts`` is "any", "float", "bool" or "int" (``float_only`` is "float");
    ``out_dtype`` fixes the result's dtype (a predicate's "bool").
    """
    accepts = accepts or ("float" if float_only else "any")

    def infer(call, ctx):
        check_arity(call, 1, op_name)
        sinfo = tensor_arg(call, 0, op_name, "x")
        if sinfo.dtype is not None and not _ACCEPTS[accepts](sinfo.dtype):
            raise ValueError(f"{op_name} expects a {accepts} tensor, got {sinfo.dtype}")
        if out_dtype is None:
            return sinfo
        return TensorStructInfo(sinfo.shape, out_dtype, sinfo.ndim if sinfo.shape is None else -1)

    register_op(op_name, infer, description=doc, attrs={})

    def build(x):
        return Call(Op.get(op_name), [x])

    build.__name__ = build.__qualname__ = py_name
    build.__doc__ = f"{doc} (``{op_name}``)."
    return build


def _unary(name, doc, **kwargs):
    return make_unary(f"relax.{name}", name, doc, **kwargs)


exp = _unary("exp", "Elementwise e ** x", float_only=True)
log = _unary("log", "Elementwise natural logarithm", float_only=True)
sqrt = _unary("sqrt", "Elementwise square root", float_only=True)
rsqrt = _unary("rsqrt", "Elementwise 1 / sqrt(x)", float_only=True)
tanh = _unary("tanh", "Elementwise hyperbolic tangent", float_only=True)
sigmoid = _unary("sigmoid", "Elementwise 1 / (1 + exp(-x))", float_only=True)
erf = _unary("erf", "Elementwise Gauss error function", float_only=True)
sin = _unary("sin", "Elementwise sine", float_only=True)
cos = _unary("cos", "Elementwise cosine", float_only=True)
tan = _unary("tan", "Elementwise tangent", float_only=True)
asin = _unary("asin", "Elementwise arcsine", float_only=True)
acos = _unary("acos", "Elementwise arccosine", float_only=True)
atan = _unary("atan", "Elementwise arctangent", float_only=True)
sinh = _unary("sinh", "Elementwise hyperbolic sine", float_only=True)
cosh = _unary("cosh", "Elementwise hyperbolic cosine", float_only=True)
asinh = _unary("asinh", "Elementwise inverse hyperbolic sine", float_only=True)
acosh = _unary("acosh", "Elementwise inverse hyperbolic cosine", float_only=True)
atanh = _unary("atanh", "Elementwise inverse hyperbolic tangent", float_only=True)
negative = _unary("negative", "Elementwise -x")
abs = _unary("abs", "Elementwise |x|")  # noqa: A001  (TVM's name)
floor = _unary("floor", "Elementwise floor")
ceil = _unary("ceil", "Elementwise ceiling")
round = _unary("round", "Elementwise rounding, halves to even")  # noqa: A001  (TVM's name)
sign = _unary("sign", "Elementwise sign (1, -1 or 0)")
square = _unary("square", "Elementwise x * x")
isnan = _unary("isnan", "Elementwise test for NaN, a bool tensor", out_dtype="bool")
isinf = _unary("isinf", "Elementwise test for infinity, a bool tensor", out_dtype="bool")
isfinite = _unary("isfinite", "Elementwise test for a finite value, a bool tensor",
                  out_dtype="bool")
logical_not = _unary("logical_not", "Elementwise not of a bool tensor", accepts="bool")


def _infer_astype(call, ctx):
    check_arity(call, 1, "relax.astype")
    sinfo = tensor_arg(call, 0, "relax.astype", "x")
    dtype = (call.attrs or {}).get("dtype")
    if dtype is None:
        raise ValueError("relax.astype needs the attribute 'dtype'")
    return TensorStructInfo(sinfo.shape, dtype, sinfo.ndim if sinfo.shape is None else -1)


register_op("relax.astype", _infer_astype, description="elementwise cast",
            attrs={"dtype": REQUIRED})


def astype(x, dtype):
    """``x`` converted elementwise to ``dtype`` (``relax.astype``)."""
    return Call(Op.get("relax.astype"), [x], attrs={"dtype": DataType(dtype)})


def _infer_clip(call, ctx):
    check_arity(call, 3, "relax.clip")
    sinfo = tensor_arg(call, 0, "relax.clip", "x")
    for index, name in ((1, "min"), (2, "max")):
        bound = call.args[index].struct_info_
        if not isinstance(bound, PrimStructInfo):
            raise ValueError(f"relax.clip: argument '{name}' must be a scalar (R.prim_value), "
                             f"got struct info {bound!r}")
    return sinfo


register_op("relax.clip", _infer_clip, description="limit to [min, max] elementwise",
            attrs={})


def _bound(value, name):
    if isinstance(value, RelaxExpr):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"relax.clip: '{name}' must be an int, a float or a PrimValue, got "
                        f"{type(value).__name__}")
    return PrimValue(value)


def clip(x, min, max):  # noqa: A002  (TVM's names)
    """``x`` limited to ``[min, max]`` elementwise; the bounds are scalars (``relax.clip``).

    >>> from rvm.relax.expr import Var
    >>> call = clip(Var("x", TensorStructInfo((2,), "float32")), 0, 6)
    >>> [a.value.value for a in call.args[1:]]
    [0, 6]
    """
    return Call(Op.get("relax.clip"), [x, _bound(min, "min"), _bound(max, "max")])
