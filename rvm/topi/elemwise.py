"""Elementwise unary operators: exp, log, sqrt, tanh, sigmoid, negative, abs, cast."""
from rvm.tir import op as _op
from rvm.te.operation import compute
from rvm.topi.utils import axis_names, named


def _unary(name, fop):
    def build(x):
        return compute(x.shape, named(lambda *i: fop(x[i]), axis_names("i", len(x.shape))),
                       name=f"T_{name}")

    build.__name__ = name
    build.__doc__ = f"Elementwise {name} of a tensor."
    return build


exp = _unary("exp", _op.exp)
log = _unary("log", _op.log)
sqrt = _unary("sqrt", _op.sqrt)
tanh = _unary("tanh", _op.tanh)
sigmoid = _unary("sigmoid", _op.sigmoid)
erf = _unary("erf", _op.erf)
negative = _unary("negative", _op.negate)
abs = _unary("abs", _op.abs)  # noqa: A001  (TVM's name)


def cast(x, dtype):
    """``x`` converted elementwise to ``dtype``."""
    return compute(x.shape, named(lambda *i: _op.cast(x[i], dtype), axis_names("ax", len(x.shape))),
                   name="T_cast")
