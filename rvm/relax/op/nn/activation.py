"""Neural network activations (``R.nn.*``): relu, gelu, gelu_tanh, silu, leakyrelu, softmax,
log_softmax; and dropout.

>>> from rvm.relax.expr import Var
>>> from rvm.relax.struct_info import TensorStructInfo
>>> softmax(Var("x", TensorStructInfo((2, 5), "float32"))).attrs
{'axis': -1}
"""
from rvm.relax.expr import Call
from rvm.relax.op.attrs import float_attr, int_attr
from rvm.relax.op.infer_util import attr, check_arity, check_float, normalize_axis, tensor_arg
from rvm.relax.op.registry import Op, register_op
from rvm.relax.op.unary import make_unary
from rvm.relax.struct_info import TupleStructInfo

relu = make_unary("relax.nn.relu", "relu", "Elementwise max(x, 0)")
gelu = make_unary("relax.nn.gelu", "gelu", "Elementwise Gaussian error linear unit, "
                  "0.5 * x * (1 + erf(x / sqrt(2)))", float_only=True)
gelu_tanh = make_unary("relax.nn.gelu_tanh", "gelu_tanh", "Elementwise Gaussian error linear "
                       "unit in its tanh approximation", float_only=True)
silu = make_unary("relax.nn.silu", "silu", "Elementwise x * sigmoid(x)", float_only=True)


def _infer_leakyrelu(call, ctx):
    check_arity(call, 1, "relax.nn.leakyrelu")
    sinfo = tensor_arg(call, 0, "relax.nn.leakyrelu", "data")
    check_float(sinfo, "relax.nn.leakyrelu")
    return sinfo


register_op("relax.nn.leakyrelu", _infer_leakyrelu, description="leaky rectified linear unit",
            attrs={"alpha": 0.01})


def leakyrelu(data, alpha=0.01):
    """``data`` where positive, else ``alpha * data`` (``relax.nn.leakyrelu``)."""
    return Call(Op.get("relax.nn.leakyrelu"), [data],
                attrs={"alpha": float_attr(alpha, "relax.nn.leakyrelu", "alpha")})


def _infer_softmax(op_name):
    def infer(call, ctx):
        check_arity(call, 1, op_name)
        sinfo = tensor_arg(call, 0, op_name, "data")
        check_float(sinfo, op_name)
        if sinfo.ndim != -1:
            normalize_axis(attr(call, "axis", -1), sinfo.ndim, op_name)
        return sinfo

    return infer


register_op("relax.nn.softmax", _infer_softmax("relax.nn.softmax"),
            description="softmax along an axis", attrs={"axis": -1})
register_op("relax.nn.log_softmax", _infer_softmax("relax.nn.log_softmax"),
            description="log of softmax along an axis", attrs={"axis": -1})


def softmax(data, axis=-1):
    """exp(x) / sum(exp(x)) along ``axis`` (``relax.nn.softmax``)."""
    return Call(Op.get("relax.nn.softmax"), [data],
                attrs={"axis": int_attr(axis, "relax.nn.softmax", "axis")})


def log_softmax(data, axis=-1):
    """log(softmax(x)) along ``axis`` (``relax.nn.log_softmax``)."""
    return Call(Op.get("relax.nn.log_softmax"), [data],
                attrs={"axis": int_attr(axis, "relax.nn.log_softmax", "axis")})


def _infer_dropout(call, ctx):
    check_arity(call, 1, "relax.nn.dropout")
    sinfo = tensor_arg(call, 0, "relax.nn.dropout", "data")
    check_float(sinfo, "relax.nn.dropout")
    rate = attr(call, "rate", 0.5)
    if not 0 <= rate < 1:
        raise ValueError(f"relax.nn.dropout: 'rate' must be in [0, 1), got {rate}")
    return TupleStructInfo([sinfo, sinfo])


register_op("relax.nn.dropout", _infer_dropout,
            description="dropout: (output, mask); the identity at inference",
            attrs={"rate": 0.5})


def dropout(data, rate=0.5):
    """Dropout with probability ``rate``: a tuple of the output and the mask (1 where kept).
    Compiled models are for inference, where dropout keeps everything: LegalizeOps makes
    the output ``data`` itself and the mask ones (``relax.nn.dropout``)."""
    return Call(Op.get("relax.nn.dropout"), [data],
                attrs={"rate": float_attr(rate, "relax.nn.dropout", "rate")})
