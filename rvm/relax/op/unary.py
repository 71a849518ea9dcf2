"""Elementwise unary operators: the result has the operand's struct info.

>>> from rvm.relax.expr import Var
>>> from rvm.relax.struct_info import TensorStructInfo
>>> exp(Var("x", TensorStructInfo((2,), "float32"))).op.name
'relax.exp'
"""
from rvm.relax.expr import Call
from rvm.relax.op.infer_util import check_arity, tensor_arg
from rvm.relax.op.registry import Op, register_op
from rvm.relax.struct_info import TensorStructInfo


def make_unary(op_name, py_name, doc, float_only=False):
    """Registers the elementwise operator ``op_name`` and returns its constructor."""

    def infer(call, ctx):
        check_arity(call, 1, op_name)
        sinfo = tensor_arg(call, 0, op_name)
        if float_only and sinfo.dtype is not None and not sinfo.dtype.is_float:
            raise ValueError(f"{op_name} expects a float tensor, got {sinfo.dtype}")
        return sinfo

    register_op(op_name, infer, description=doc)

    def build(x):
        return Call(Op.get(op_name), [x])

    build.__name__ = build.__qualname__ = py_name
    build.__doc__ = f"{doc} (``{op_name}``)."
    return build


exp = make_unary("relax.exp", "exp", "Elementwise e ** x", float_only=True)
log = make_unary("relax.log", "log", "Elementwise natural logarithm", float_only=True)
sqrt = make_unary("relax.sqrt", "sqrt", "Elementwise square root", float_only=True)
rsqrt = make_unary("relax.rsqrt", "rsqrt", "Elementwise 1 / sqrt(x)", float_only=True)
tanh = make_unary("relax.tanh", "tanh", "Elementwise hyperbolic tangent", float_only=True)
sigmoid = make_unary("relax.sigmoid", "sigmoid", "Elementwise 1 / (1 + exp(-x))",
                     float_only=True)
negative = make_unary("relax.negative", "negative", "Elementwise -x")
abs = make_unary("relax.abs", "abs", "Elementwise |x|")  # noqa: A001  (TVM's name)


def _infer_astype(call, ctx):
    check_arity(call, 1, "relax.astype")
    sinfo = tensor_arg(call, 0, "relax.astype")
    dtype = (call.attrs or {}).get("dtype")
    if dtype is None:
        raise ValueError("relax.astype needs the attribute 'dtype'")
    return TensorStructInfo(sinfo.shape, dtype, sinfo.ndim if sinfo.shape is None else -1)


register_op("relax.astype", _infer_astype, description="elementwise cast")


def astype(x, dtype):
    """``x`` converted elementwise to ``dtype`` (``relax.astype``)."""
    from rvm.runtime.data_type import DataType

    return Call(Op.get("relax.astype"), [x], attrs={"dtype": DataType(dtype)})
