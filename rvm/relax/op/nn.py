"""Neural network operators (``R.nn.*``): activations and softmax.

>>> from rvm.relax.expr import Var
>>> from rvm.relax.struct_info import TensorStructInfo
>>> softmax(Var("x", TensorStructInfo((2, 5), "float32"))).attrs
{'axis': -1}
"""
from rvm.relax.expr import Call
from rvm.relax.op.infer_util import check_arity, normalize_axis, tensor_arg
from rvm.relax.op.registry import Op, register_op
from rvm.relax.op.unary import make_unary

relu = make_unary("relax.nn.relu", "relu", "Elementwise max(x, 0)")
gelu = make_unary("relax.nn.gelu", "gelu", "Elementwise Gaussian error linear unit",
                  float_only=True)
silu = make_unary("relax.nn.silu", "silu", "Elementwise x * sigmoid(x)", float_only=True)


def _infer_softmax(op_name):
    def infer(call, ctx):
        check_arity(call, 1, op_name)
        sinfo = tensor_arg(call, 0, op_name)
        if sinfo.dtype is not None and not sinfo.dtype.is_float:
            raise ValueError(f"{op_name} expects a float tensor, got {sinfo.dtype}")
        if sinfo.ndim != -1:
            normalize_axis((call.attrs or {}).get("axis", -1), sinfo.ndim, op_name)
        return sinfo

    return infer


register_op("relax.nn.softmax", _infer_softmax("relax.nn.softmax"),
            description="softmax along an axis")
register_op("relax.nn.log_softmax", _infer_softmax("relax.nn.log_softmax"),
            description="log of softmax along an axis")


def softmax(data, axis=-1):
    """exp(x) / sum(exp(x)) along ``axis`` (``relax.nn.softmax``)."""
    return Call(Op.get("relax.nn.softmax"), [data], attrs={"axis": int(axis)})


def log_softmax(data, axis=-1):
    """log(softmax(x)) along ``axis`` (``relax.nn.log_softmax``)."""
    return Call(Op.get("relax.nn.log_softmax"), [data], attrs={"axis": int(axis)})
